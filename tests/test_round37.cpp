// Red-team round 37 (docs/redteam.md): the files users hand fusor besides the model — input
// tensors (.pb / .npy), test_data_set folders — and the CLI options around them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "frontend/onnx_import.h"
#include "fuzz_harness.h"
#include "runtime/session.h"
#include "runtime/tensor_io.h"
#include "test_util.h"

namespace fusor {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

onnx::ModelProto sub_proto() { return fuzz::sub_model_proto(); }
Graph sub_model() { return load_onnx_from_bytes(sub_proto().SerializeAsString(), "."); }

TEST(Round37, ATensorNamedAfterAnotherInputIsNotBoundByPosition) {
  const Graph g = sub_model();
  const Tensor a = testing::random_tensor(DType::f32, {2, 3}, 1), b = testing::random_tensor(DType::f32, {2, 3}, 2);
  const auto z = [&](const std::vector<std::string>& names) {
    return Session(g, "ref").run(bind_inputs(g, {a, b}, names, "run"))[0];
  };
  // Every name distinct and an input: by name, so {y, x} swaps them.
  const Tensor named = z({"y", "x"}), plain = z({"", ""}), other = z({"p", "q"});
  for (int64_t i = 0; i < a.numel(); ++i) {
    EXPECT_EQ(named.get(i), static_cast<float>(b.get(i) - a.get(i))) << i;
    EXPECT_EQ(plain.get(i), static_cast<float>(a.get(i) - b.get(i))) << i;  // unnamed: by position
    EXPECT_EQ(other.get(i), plain.get(i)) << i;  // names of no input: by position, as before
  }
  // Was y - x silently: the first file names y, the second none, so they went by position.
  EXPECT_ERROR(z({"y", ""}), "tensor 0 is named 'y', input 1 of the model, but the tensors are bound by position");
  EXPECT_ERROR(z({"x", "x"}), "tensor 1 is named 'x', input 0 of the model");
}

TEST(Round37, ATensorProtoHoldsOneValueFieldAndAKnownDataType) {
  onnx::TensorProto t;
  t.set_name("x");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(2);
  const float v[2] = {7.0f, 7.0f};
  t.set_raw_data(std::string(reinterpret_cast<const char*>(v), sizeof v));
  EXPECT_EQ(tensor_from_proto(t, ".").get(1), 7.0);
  t.add_float_data(1.0f), t.add_float_data(2.0f);  // was: raw_data won silently
  EXPECT_ERROR(tensor_from_proto(t, "."), "holds values in both raw_data and float_data (onnx.proto allows one value field)");
  t.clear_raw_data();
  t.add_int64_data(3);
  EXPECT_ERROR(tensor_from_proto(t, "."), "holds values in both float_data and int64_data");
  // A number past the DataType enum is a corrupt file (a conform failure), not a dtype fusor
  // lacks (a skip, as complex64 stays).
  t.clear_int64_data();
  t.set_data_type(99);
  try {
    tensor_from_proto(t, ".");
    ADD_FAILURE() << "data_type 99 was accepted";
  } catch (const Unsupported& e) {
    ADD_FAILURE() << "data_type 99 is a skip: " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("data_type 99 is not an ONNX data type"), std::string::npos) << e.what();
  }
  t.set_data_type(onnx::TensorProto::COMPLEX64);
  EXPECT_THROW(tensor_from_proto(t, "."), Unsupported);
}

TEST(Round37, TestDataSetZeroIsTheFirstAndOddFileNamesAreRefused) {
  TempDir t;
  const Tensor x = testing::random_tensor(DType::f32, {2, 3}, 3), y = testing::random_tensor(DType::f32, {2, 3}, 4);
  for (const char* set : {"test_data_set_old", "test_data_set_0", "test_data_set_1234567890123"}) {
    fs::create_directories(fs::path(t.path) / set);
    write_tensor_pb((fs::path(t.path) / set / "input_0.pb").string(), std::string(set) == "test_data_set_0" ? x : y, "x");
  }
  // Non-numeric (and 13+ digit) names sorted before test_data_set_0, so `run` used "old".
  const auto sets = load_test_data_sets(t.path.string());
  ASSERT_EQ(sets.size(), 3u);
  EXPECT_EQ(fs::path(sets[0].dir).filename(), "test_data_set_0");
  EXPECT_EQ(sets[0].inputs[0].get(4), x.get(4));
  // input_-1.pb / input_<arabic digit>.pb were ignored, so the case passed without them.
  write_tensor_pb(t / "test_data_set_0/input_-1.pb", x, "x");
  EXPECT_ERROR(load_test_data_sets(t.path.string()), "input_-1.pb': expected a name input_K.pb / output_K.pb with K a number");
}

TEST(Round37, RanksPastNumpysAreRefusedAndLongShapesPrintShort) {
  EXPECT_EQ(shape_bounds_problem(Shape(65, 1)), "rank 65 is over 64");
  EXPECT_EQ(shape_bounds_problem(Shape(64, 1)), "");
  EXPECT_EQ(shape_bounds_problem({int64_t{1} << 40, int64_t{1} << 20}), "more than 2^56 elements");
  // A million dims printed in full made a 3 MB error line.
  const std::string s = shape_str_short(Shape(1000000, 1));
  EXPECT_EQ(s, "[1, 1, 1, 1, 1, 1, 1, 1, ..., 1, 1] (rank 1000000)");
  EXPECT_EQ(shape_str_short({2, 3}), "[2, 3]");
  // shape_str keeps every dim: it is also a cache key (a rank-17 shape differing in dim 8 is
  // another executable).
  Shape a(17, 1), b(17, 1);
  b[8] = 4;
  EXPECT_NE(shape_str(a), shape_str(b));
  {
    auto m = fuzz::new_model(17);
    auto* g = m.mutable_graph();
    auto* vi = g->add_input();
    vi->set_name("x");
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    for (int i = 0; i < 17; ++i) vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("d" + std::to_string(i));
    fuzz::add_node(g, "Relu", {"x"}, {"y"});
    g->add_output()->set_name("y");
    Session sess(load_onnx_from_bytes(m.SerializeAsString(), "."), "cpu");
    for (const Shape& sh : {a, b}) {
      const Tensor x = testing::random_tensor(DType::f32, sh, 9);
      const Tensor y = sess.run({x})[0];
      ASSERT_EQ(y.shape(), sh);
      for (int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(y.get(i), std::max(0.0, x.get(i))) << i;
    }
  }
  // An Expand to a run-time shape of rank 70 (NumPy holds 64; nanobind aborted past it).
  auto m = fuzz::new_model(17);
  auto* g = m.mutable_graph();
  fuzz::set_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {1});
  fuzz::set_type(g->add_input(), "s", onnx::TensorProto::INT64, {70});
  fuzz::add_node(g, "Expand", {"x", "s"}, {"y"});
  g->add_output()->set_name("y");
  const Graph eg = load_onnx_from_bytes(m.SerializeAsString(), ".");
  Tensor shape(DType::i64, {70});
  for (int64_t i = 0; i < 70; ++i) shape.set(i, 1);
  EXPECT_ERROR(Session(eg, "ref").run({testing::random_tensor(DType::f32, {1}, 5), shape}), "rank 70 is over 64");
  // .npy and .pb files of rank 100 name the file.
  TempDir t;
  write_npy(t / "a.npy", Tensor(DType::f32, {2}));
  std::string npy;
  {
    std::ifstream in(t / "a.npy", std::ios::binary);
    npy.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::string dims = "(";
  for (int i = 0; i < 100; ++i) dims += "1, ";
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + dims + "), }";
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header + std::string(4, '\0');
  std::ofstream(t / "r.npy", std::ios::binary) << bytes;
  EXPECT_ERROR(read_tensor(t / "r.npy"), "r.npy': npy shape [1, 1, 1, 1, 1, 1, 1, 1, ..., 1, 1] (rank 100): rank 100 is over 64");
  // A list where numpy writes a tuple is named as such (was "a structured (record) dtype").
  const std::string list_header = "{'descr': '<f4', 'fortran_order': False, 'shape': [2], }";
  bytes = std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(list_header.size()) + '\0' + list_header + std::string(8, '\0');
  std::ofstream(t / "l.npy", std::ios::binary) << bytes;
  EXPECT_ERROR(read_tensor(t / "l.npy"), "npy 'shape' is not a tuple of dimensions");
}

TEST(Round37, InputsExcludeTheOptionsThatMakeRandomOnes) {
  if (!testing::have_cli()) GTEST_SKIP() << "fusor binary not found (FUSOR_BIN unset)";
  TempDir t;
  fs::create_directories(t.path / "in");
  write_tensor_pb(t / "in/input_0.pb", testing::random_tensor(DType::f32, {2, 3}, 6), "x");
  write_tensor_pb(t / "in/input_1.pb", testing::random_tensor(DType::f32, {2, 3}, 7), "y");
  std::ofstream(t / "model.onnx", std::ios::binary) << sub_proto().SerializeAsString();
  std::string out;
  const std::string base = "run " + (t / "model.onnx") + " --backend ref --inputs " + (t / "in");
  EXPECT_EQ(testing::run_cli(base, &out), 0) << out;
  // Each was ignored silently beside --inputs.
  for (const char* extra : {" --seed 3", " --shape x=5x3", " --dim N=7"}) {
    EXPECT_NE(testing::run_cli(base + extra, &out), 0) << extra;
    EXPECT_NE(out.find("--inputs excludes"), std::string::npos) << extra << ": " << out;
  }
}

}  // namespace
}  // namespace fusor
