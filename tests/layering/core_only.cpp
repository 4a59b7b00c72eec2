// The control case: a core file including core headers compiles with core's include path.
#include <ember/core/tensor.h>
int core_only_compiles = 1;
