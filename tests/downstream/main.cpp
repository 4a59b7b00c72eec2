// tests/downstream/main.cpp — built against the installed tree by the "install" test.
// Prints the §2 matmul so the test can check the library really ran.
#include <ember/ember.h>

#include <iostream>

int main() {
  auto tensor2d = ember::tensor({{1, 2, 3}, {4, 5, 6}});
  std::cout << tensor2d.matmul(tensor2d.T()) << "\n";
  return 0;
}
