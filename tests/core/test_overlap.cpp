// tests/core/test_overlap.cpp — in-place ops and copy_ whose input shares memory with the
// tensor they write (core/tensor_iterator.h, memory_overlap / check_no_partial_overlap).
// A partial overlap used to give silently wrong values (an element read after it had been
// overwritten; copy_ reached memcpy over overlapping ranges); PyTorch refuses it, and so
// does ember now, with PyTorch's message. A full overlap (true in place) stays allowed.
// Outcomes probed with torch 2.15.
#include <catch2/catch.hpp>

#include <vector>

#include <ember/core/tensor_iterator.h>
#include <ember/core/native.h>
#include <ember/ember.h>

#include "test_support.h"

using namespace ember;
using ember::testing::to_vector;

namespace {
const char* const kPartial =
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
    "location. Please clone() the tensor before performing the operation.";
const char* const kInternal =
    "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
    "Please clone() the tensor before performing the operation.";

Tensor square3() { return arange(9.0).reshape({3, 3}); }
}  // namespace

TEST_CASE("an in-place op whose input partially overlaps self is refused", "[core][overlap]") {
  Tensor x = arange(6.0);
  // Shifted by one: each element would add a value already overwritten (a running sum).
  REQUIRE_THROWS_AS(x.slice(0, 1).add_(x.slice(0, 0, 5)), ValueError);
  REQUIRE_THROWS_WITH(x.slice(0, 1).add_(x.slice(0, 0, 5)), kPartial);
  REQUIRE_THROWS_WITH(x.slice(0, 0, 5).sub_(x.slice(0, 1)), kPartial);
  CHECK(to_vector(x) == std::vector<double>{0, 1, 2, 3, 4, 5});  // nothing was written

  Tensor m = square3();
  // Same memory, another layout: transposed reads of already-written elements.
  REQUIRE_THROWS_WITH(m.mul_(m.t()), kPartial);
  REQUIRE_THROWS_WITH(m.div_(m.t()), kPartial);
  // A row of m broadcast over m: the row itself is written during the op.
  REQUIRE_THROWS_WITH(m.add_(m[0]), kPartial);
  CHECK(to_vector(m) == to_vector(square3()));
}

TEST_CASE("copy_ from a partially overlapping source is refused", "[core][overlap]") {
  Tensor m = square3();
  REQUIRE_THROWS_AS(m.copy_(m.t()), ValueError);
  REQUIRE_THROWS_WITH(m.copy_(m.t()), kPartial);
  Tensor x = arange(6.0);
  REQUIRE_THROWS_WITH(x.slice(0, 1).copy_(x.slice(0, 0, 5)), kPartial);
  REQUIRE_THROWS_WITH(native::copy_(x.slice(0, 0, 5), x.slice(0, 1)), kPartial);
  CHECK(to_vector(m) == to_vector(square3()));
  CHECK(to_vector(x) == std::vector<double>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("full overlap, disjoint views and fresh copies are still allowed", "[core][overlap]") {
  Tensor m = square3();
  m.add_(m);  // the same tensor: true in place
  CHECK(to_vector(m) == std::vector<double>{0, 2, 4, 6, 8, 10, 12, 14, 16});
  m.add_(m.view({3, 3}));  // another handle on the very same elements and layout
  CHECK(to_vector(m) == std::vector<double>{0, 4, 8, 12, 16, 20, 24, 28, 32});
  const auto version = m.version();
  m.copy_(m);  // nothing to move, but still an in-place write for autograd
  CHECK(m.version() > version);
  CHECK(to_vector(m) == std::vector<double>{0, 4, 8, 12, 16, 20, 24, 28, 32});
  m.copy_(m.view({3, 3}));
  CHECK(to_vector(m)[8] == 32);

  Tensor rows = square3();
  rows[0].add_(rows[1]);  // two rows of one storage, no shared element
  CHECK(to_vector(rows) == std::vector<double>{3, 5, 7, 3, 4, 5, 6, 7, 8});

  // Interleaved views share a storage but no element; PyTorch cannot tell ("too hard") and
  // runs the op, and so does ember.
  Tensor y = arange(6.0);
  y.slice(0, 0, 6, 2).add_(y.slice(0, 1, 6, 2));
  CHECK(to_vector(y) == std::vector<double>{1, 1, 5, 3, 9, 5});

  // A clone breaks the overlap, as the message suggests.
  Tensor z = arange(6.0);
  z.slice(0, 1).add_(z.slice(0, 0, 5).clone());
  CHECK(to_vector(z) == std::vector<double>{0, 1, 3, 5, 7, 9});
  Tensor t = square3();
  t.copy_(t.t().clone());
  CHECK(to_vector(t) == std::vector<double>{0, 3, 6, 1, 4, 7, 2, 5, 8});

  // Out-of-place ops write a fresh tensor: any aliasing among the inputs is fine.
  Tensor s = square3();
  CHECK(to_vector(s + s.t()) == std::vector<double>{0, 4, 8, 4, 8, 12, 8, 12, 16});
}

TEST_CASE("writing through an expanded view is refused, filling it is not", "[core][overlap]") {
  Tensor base = zeros({1});
  REQUIRE_THROWS_AS(base.expand({3}).add_(ones({3})), ValueError);
  REQUIRE_THROWS_WITH(base.expand({3}).add_(ones({3})), kInternal);
  REQUIRE_THROWS_WITH(base.expand({3}).copy_(ones({3})), kInternal);
  base.expand({3}).fill_(2.0);  // one value everywhere: the order cannot matter (PyTorch allows it)
  CHECK(to_vector(base) == std::vector<double>{2});
}

TEST_CASE("memory_overlap classifies layouts as PyTorch does", "[core][overlap]") {
  Tensor m = square3();
  CHECK(memory_overlap(m, m) == MemoryOverlap::Full);
  CHECK(memory_overlap(m, m.view({3, 3})) == MemoryOverlap::Full);
  CHECK(memory_overlap(m, m.t()) == MemoryOverlap::Partial);
  CHECK(memory_overlap(m, m[1]) == MemoryOverlap::Partial);
  CHECK(memory_overlap(m[0], m[1]) == MemoryOverlap::No);
  CHECK(memory_overlap(m, square3()) == MemoryOverlap::No);
  CHECK(memory_overlap(m, m.slice(0, 0, 0)) == MemoryOverlap::No);      // no elements
  CHECK(memory_overlap(m, m.slice(1, 0, 3, 2)) == MemoryOverlap::TooHard);  // not dense
  CHECK(memory_overlap(m.t(), m.t()) == MemoryOverlap::Full);
}
