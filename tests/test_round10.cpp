// Red-team round 10 (docs/redteam.md): the faults it found, each checked on every backend here.
//  - Mean with many inputs: one variadic node was one kernel loading every input (Mean of 40
//    inputs needed 41 Vulkan storage buffers; of 256 copies of one value it could not be
//    planned). It now decomposes like Sum: a chain of Adds in the fold's order, then one IEEE
//    division by the count, so every backend matches ref's single-node rule bit for bit.
//  - CLI errors: a symlink loop where a test set or a model should be, a SequenceProto where a
//    TensorProto should be, and an allocation larger than the process may make each give one
//    tagged line ([io], [onnx], [memory]) with exit status 2.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sys/wait.h>

#include "backends/backend.h"
#include "frontend/builder.h"
#include "frontend/onnx_import.h"
#include "runtime/session.h"
#include "runtime/tensor_io.h"
#include "fuzz_harness.h"
#include "onnx/onnx-data_pb.h"
#include "test_util.h"
#ifdef FUSOR_HAVE_CUDA
#include "backends/codegen.h"
#include "backends/cuda/cuda_backend.h"
#include "ir/kernel_spec.h"
#endif

namespace fusor {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// Mean of `n` inputs: `distinct` graph inputs used round-robin (1 = n copies of one value).
Graph mean_graph(DType t, int n, int distinct, const Shape& s) {
  GraphBuilder b("mean" + std::to_string(n), 13);
  std::vector<int> ins, args;
  for (int i = 0; i < distinct; ++i) ins.push_back(b.input("x" + std::to_string(i), t, s));
  for (int i = 0; i < n; ++i) args.push_back(ins[static_cast<size_t>(i % distinct)]);
  b.output(b.op("Mean", args));
  return b.build();
}

TEST(Round10, MeanOfManyInputsMatchesReferenceBitForBit) {
  struct Case {
    int n, distinct;
  };
  // 256 copies of one value (could not be planned); 40 and 300 distinct inputs (more than a
  // Vulkan stage's 32 storage buffers); 3 (the smallest that decomposes).
  const Case cases[] = {{256, 1}, {40, 40}, {300, 300}, {3, 3}, {2, 2}};
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " Mean of " + std::to_string(c.n) + " (" + std::to_string(c.distinct) + " distinct)");
      const Graph g = mean_graph(t, c.n, c.distinct, {5});
      std::vector<Tensor> in;
      // Inputs of mixed magnitude, so the fold's order and the single division show in the bits.
      for (int i = 0; i < c.distinct; ++i) in.push_back(testing::random_tensor(t, {5}, 900 + static_cast<uint64_t>(i), -1.0, 1.0));
      if (c.distinct > 1) in[1] = testing::random_tensor(t, {5}, 899, -3000.0, 3000.0);
      const std::vector<Tensor> want = Session(g, "ref").run(in);
      for (const std::string& be : testing::usable_backends()) {
        if (be == "ref") continue;
        const std::vector<Tensor> got = Session(g, be).run(in);
        ASSERT_EQ(got.size(), 1u);
        EXPECT_EQ(0, std::memcmp(got[0].raw(), want[0].raw(), want[0].nbytes())) << be;
      }
#ifdef FUSOR_HAVE_CUDA
      {  // no GPU here: the generated CUDA C must still compile
        const Plan p = build_plan(specialize(g, in));
        for (const KernelSpec& k : p.kernels) {
          const std::string src = cuda_kernel_source(k, p, nullptr);
          if (!src.empty()) EXPECT_NO_THROW(nvrtc_compile_check(src, kernel_identifier(k.name))) << src;
        }
      }
#endif
    }
  }
}

// A Relu model folder whose test_data_set_0 is `set` (made by the caller).
void write_relu_model(const std::string& dir) {
  fs::create_directories(dir);
  auto m = fuzz::new_model(17);
  auto* g = m.mutable_graph();
  fuzz::set_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  fuzz::add_node(g, "Relu", {"x"}, {"y"})->set_name("relu");
  fuzz::set_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {2, 3});
  std::ofstream(fs::path(dir) / "model.onnx", std::ios::binary) << m.SerializeAsString();
}

TEST(Round10, SymlinkLoopsAreNamedNotRawFilesystemErrors) {
  TempDir t;
  const std::string dir = t / "m";
  write_relu_model(dir);
  fs::create_symlink(fs::path(dir) / "test_data_set_0", fs::path(dir) / "test_data_set_0");  // a link to itself
  EXPECT_ERROR(load_test_data_sets(dir), "test_data_set_0': Too many levels of symbolic links");
  fs::create_symlink(t / "loop_b", t / "loop_a");
  fs::create_symlink(t / "loop_a", t / "loop_b");
  EXPECT_ERROR(load_onnx(t / "loop_a"), "cannot open model");
  EXPECT_ERROR(load_onnx(t / "loop_a"), "Too many levels of symbolic links");
  EXPECT_ERROR(read_numbered_inputs(t / "loop_a"), "Too many levels of symbolic links");
  if (!testing::have_cli()) GTEST_SKIP() << "the fusor CLI is not built here";
  std::string out;
  EXPECT_EQ(testing::run_cli("run " + dir + " --backend cpu", &out), 2) << out;
  EXPECT_NE(out.find("fusor: error: [io] '"), std::string::npos) << out;
  EXPECT_EQ(out.find("filesystem error"), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
}

TEST(Round10, SequenceProtoWhereATensorIsExpectedSaysSo) {
  TempDir t;
  onnx::SequenceProto seq;
  seq.set_name("s");
  seq.set_elem_type(onnx::SequenceProto::TENSOR);
  onnx::TensorProto* e = seq.add_tensor_values();
  e->set_data_type(onnx::TensorProto::FLOAT);
  e->add_dims(2);
  e->add_float_data(1.0f);
  e->add_float_data(2.0f);
  const std::string path = t / "input_0.pb";
  std::ofstream(path, std::ios::binary) << seq.SerializeAsString();
  try {
    read_tensor(path);
    ADD_FAILURE() << "a SequenceProto was read as a tensor";
  } catch (const Unsupported& u) {
    EXPECT_NE(std::string(u.what()).find("not a TensorProto but (by its layout) an ONNX SequenceProto or OptionalProto"), std::string::npos) << u.what();
  }
}

TEST(Round10, AllocationsTooLargeForTheProcessAreOneMemoryLine) {
  if (!testing::have_cli()) GTEST_SKIP() << "the fusor CLI is not built here";
  TempDir t;
  write_relu_model(t / "m");
  // A dynamic-shape copy of the Relu model: x [N, M].
  auto m = fuzz::new_model(17);
  auto* g = m.mutable_graph();
  fuzz::set_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {-1, -1});
  fuzz::add_node(g, "Relu", {"x"}, {"y"})->set_name("relu");
  fuzz::set_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {-1, -1});
  std::ofstream(t / "dyn.onnx", std::ios::binary) << m.SerializeAsString();
  // 32768 x 32768 floats (4 GiB) under a 2 GiB address-space limit: below the host's memory, so
  // the size check before allocating passes and the allocation itself fails (std::bad_alloc,
  // which printed as a bare "std::bad_alloc").
  const char* bin = std::getenv("FUSOR_BIN");
  const std::string log = t / "out.txt";
  const int rc = std::system(("ulimit -v 2097152; " + std::string(bin ? bin : "./fusor") + " explain " + (t / "dyn.onnx") +
                              " --backend cpu --shape x=32768x32768 >" + log + " 2>&1")
                                 .c_str());
  std::ifstream in(log);
  const std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 2) << rc << " " << out;
  EXPECT_NE(out.find("fusor: error: [memory] out of host memory"), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
}

}  // namespace
}  // namespace fusor
