// A core file that (wrongly) includes a higher layer. The layering test expects the
// compiler to refuse it: ember_core's include path has no <ember/autograd/...>.
#include <ember/core/tensor.h>
#include <ember/autograd/autograd.h>
