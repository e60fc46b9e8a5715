// Red-team round 12 (docs/redteam.md): random-graph fusion fuzzing.
//  - Vulkan (lavapipe): a signed integer of at most 32 bits widened to int64 by Cast compared as
//    if never negative (Abs returned it unchanged, Less(x, 0) was false, Relu kept it): the
//    dialect now builds the 64-bit value from the value and its sign word.
#include <gtest/gtest.h>

#include <cstring>

#include "frontend/builder.h"
#include "runtime/session.h"
#include "test_util.h"

namespace fusor {
namespace {

TEST(Round12, WideningCastsKeepTheSign) {
  for (DType from : {DType::i8, DType::i16, DType::i32}) {
    for (DType to : {DType::i64, DType::u64}) {
      GraphBuilder b("widen", 17);
      const int x = b.input("x", from, {8});
      const int c = b.op("Cast", {x}, {{"to", int64_t{dtype_to_onnx(to)}}});
      if (to == DType::i64) {
        b.output(b.op("Abs", {c}));
        b.output(b.op("Relu", {c}));
        b.output(b.op("Sign", {c}));
        b.output(b.op("Less", {c, b.constant("zero", testing::ints_of({}, {0}, DType::i64))}));
      } else {
        b.output(b.op("Max", {c, b.constant("one", testing::ints_of({}, {1}, DType::u64))}));
      }
      const Graph g = b.build();
      const Tensor in = testing::ints_of({8}, {-3, -2, -1, 0, 1, 2, 3, -100}, from);
      const std::vector<Tensor> want = Session(g, "ref").run({in});
      if (to == DType::i64) {
        EXPECT_EQ(want[0].get_int(0), 3);
        EXPECT_EQ(want[1].get_int(0), 0);
        EXPECT_EQ(want[2].get_int(7), -1);
        EXPECT_EQ(want[3].get_int(1), 1);
      } else {
        EXPECT_EQ(static_cast<uint64_t>(want[0].get_int(0)), ~uint64_t{0} - 2);  // -3 as uint64
      }
      for (const std::string& be : testing::usable_backends()) {
        const std::vector<Tensor> got = Session(g, be).run({in});
        for (size_t k = 0; k < want.size(); ++k)
          EXPECT_EQ(0, std::memcmp(got[k].raw(), want[k].raw(), want[k].nbytes()))
              << be << " " << dtype_name(from) << " -> " << dtype_name(to) << " output " << k;
      }
    }
  }
}

}  // namespace
}  // namespace fusor
