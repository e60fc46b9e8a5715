// ONNX import, tensor files (.pb/.npy), test-case folders and the C++ graph builder.
// Models are generated here with libonnx's protobuf classes so the suite runs without
// ../shared; the real models under $FUSOR_SHARED/models are loaded when present.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "frontend/builder.h"
#include "frontend/onnx_import.h"
#include "runtime/session.h"
#include "runtime/tensor_io.h"

using namespace fusor;
namespace fs = std::filesystem;

namespace {

// A fresh folder under the system temp dir, removed when the test ends.
struct TempDir {
  fs::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    std::random_device rd;
    path = fs::temp_directory_path() /
           ("fusor_io_test_" + std::to_string(rd()) + "_" + std::to_string(counter++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& f) const { return (path / f).string(); }
};

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}
std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <class F> void expect_error(F&& f, const std::string& substr) {
  try {
    f();
    ADD_FAILURE() << "expected a fusor::Error containing '" << substr << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(substr), std::string::npos) << "message was: " << e.what();
  }
}

// Seeded random values, never all zeros (DESIGN.md numerics policy).
Tensor random_tensor(DType dt, Shape shape, uint32_t seed) {
  Tensor t(dt, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-4.0, 4.0);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dt == DType::boolean) t.set(i, rng() & 1);
    else if (dt == DType::i64) t.set_int(i, static_cast<int64_t>(rng()) - (1ll << 31) + (int64_t{1} << 40));
    else t.set(i, u(rng));
  }
  return t;
}

void expect_same(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.nbytes(), b.nbytes());
  EXPECT_EQ(0, std::memcmp(a.raw(), b.raw(), a.nbytes()));
}

void add_raw_initializer(onnx::GraphProto* g, const std::string& name, const std::vector<float>& v, Shape dims) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t->add_dims(d);
  t->set_raw_data(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

void set_tensor_type(onnx::ValueInfoProto* vi, const std::string& name, int elem, const std::vector<std::string>& dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  shape->clear_dim();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
    else dim->set_dim_param(d);
  }
}

// y = Add(x, w) with w an initializer of `n` floats (large n makes truncation land inside data).
onnx::ModelProto small_model(int64_t n = 6) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("small");
  set_tensor_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {std::to_string(n)});
  std::vector<float> w(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) w[i] = 0.5f + static_cast<float>(i);
  add_raw_initializer(g, "w", w, {n});
  auto* node = g->add_node();
  node->set_op_type("Add");
  node->add_input("x");
  node->add_input("w");
  node->add_output("y");
  set_tensor_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {std::to_string(n)});
  return m;
}

std::string save_model(const TempDir& d, const onnx::ModelProto& m, const std::string& file = "model.onnx") {
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  write_bytes(d / file, bytes);
  return d / file;
}

// Makes initializer 0 of the model external: data at `offset` in `file` under dir (or just
// the location string when dir is null, for the path-escape cases).
void make_external(onnx::ModelProto& m, const std::string& location, const TempDir* dir, int64_t offset) {
  auto* t = m.mutable_graph()->mutable_initializer(0);
  std::string raw = t->raw_data();
  t->clear_raw_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto kv = [&](const char* k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", location);
  kv("offset", std::to_string(offset));
  kv("length", std::to_string(raw.size()));
  if (dir) write_bytes(*dir / location, std::string(static_cast<size_t>(offset), '\x7f') + raw);
}

fs::path shared_dir() {
  const char* env = std::getenv("FUSOR_SHARED");
  return env ? fs::path(env) : fs::path(FUSOR_SOURCE_DIR) / ".." / "shared";
}

}  // namespace

TEST(TensorIo, PbRoundTrip) {
  TempDir d;
  uint32_t seed = 1;
  for (DType dt : {DType::f32, DType::i64, DType::boolean, DType::f16}) {
    for (Shape s : {Shape{}, Shape{7}, Shape{2, 3, 5}, Shape{0, 4}}) {
      Tensor t = random_tensor(dt, s, seed++);
      std::string path = d / "t.pb", name;
      write_tensor_pb(path, t, "tensor_a");
      Tensor back = read_tensor_pb(path, &name);
      EXPECT_EQ(name, "tensor_a");
      expect_same(back, t);
      expect_same(read_tensor(path), t);
    }
  }
}

TEST(TensorIo, NpyRoundTrip) {
  TempDir d;
  uint32_t seed = 100;
  for (DType dt : {DType::f32, DType::i64, DType::boolean, DType::f16, DType::f64, DType::u8, DType::i32}) {
    for (Shape s : {Shape{}, Shape{7}, Shape{2, 3, 5}}) {
      Tensor t = random_tensor(dt, s, seed++);
      write_npy(d / "t.npy", t);
      expect_same(read_npy(d / "t.npy"), t);
      expect_same(read_tensor(d / "t.npy"), t);
    }
  }
}

TEST(TensorIo, NpyHeaderMatchesNumpy) {
  // The exact header numpy 1.x/2.x writes for np.save(f, np.zeros((2, 3), np.float32)).
  TempDir d;
  write_npy(d / "z.npy", Tensor(DType::f32, {2, 3}));
  std::string bytes = read_bytes(d / "z.npy");
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  ASSERT_EQ(bytes.size(), 128u + 24u);
  EXPECT_EQ(bytes.substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));
  EXPECT_EQ(bytes.substr(10, dict.size()), dict);
  EXPECT_EQ(bytes[127], '\n');
}

TEST(TensorIo, NpyErrors) {
  TempDir d;
  write_npy(d / "ok.npy", random_tensor(DType::f32, {4, 4}, 7));
  std::string good = read_bytes(d / "ok.npy");
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  write_bytes(d / "fortran.npy", fortran);
  expect_error([&] { read_npy(d / "fortran.npy"); }, "fortran_order");
  std::string big_endian = good;
  big_endian.replace(big_endian.find("<f4"), 3, ">f4");
  write_bytes(d / "be.npy", big_endian);
  expect_error([&] { read_npy(d / "be.npy"); }, "big-endian");
  std::string structured = good;  // numpy's descr for np.dtype([('a', '<f4')]) (same header length)
  structured.replace(structured.find("'<f4'"), 5, "[('a','<f4')]");
  structured.erase(structured.find("}") + 2, 8);
  write_bytes(d / "rec.npy", structured);
  expect_error([&] { read_npy(d / "rec.npy"); }, "structured");
  write_bytes(d / "short.npy", good.substr(0, good.size() - 8));
  expect_error([&] { read_npy(d / "short.npy"); }, "truncated");
  write_bytes(d / "text.npy", "just text, definitely not numpy");
  expect_error([&] { read_npy(d / "text.npy"); }, "text.npy");
  expect_error([&] { read_npy(d / "missing.npy"); }, "missing.npy");
  expect_error([&] { read_tensor(d / "t.csv"); }, "t.csv");
  expect_error([&] { write_npy(d / "bf.npy", Tensor(DType::bf16, {2})); }, "bfloat16");
  write_bytes(d / "garbage.pb", std::string("\xff\xff\xff\xff\x0f", 5));
  try {
    read_tensor_pb(d / "garbage.pb");
    ADD_FAILURE() << "garbage .pb was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.component(), "io");
    EXPECT_NE(std::string(e.what()).find("garbage.pb"), std::string::npos);
  }
}

TEST(TensorIo, TypedFieldsDecode) {
  onnx::TensorProto t;
  t.set_name("h");
  t.set_data_type(onnx::TensorProto::FLOAT16);
  t.add_dims(2);
  t.add_int32_data(0x3c00);  // 1.0 as IEEE half bits
  t.add_int32_data(0xc000);  // -2.0
  Tensor h = tensor_from_proto(t, ".");
  EXPECT_EQ(h.get(0), 1.0);
  EXPECT_EQ(h.get(1), -2.0);

  onnx::TensorProto b;
  b.set_data_type(onnx::TensorProto::BOOL);
  b.add_dims(3);
  for (int v : {1, 0, 1}) b.add_int32_data(v);
  Tensor bt = tensor_from_proto(b, ".");
  EXPECT_EQ(bt.get(0), 1.0);
  EXPECT_EQ(bt.get(1), 0.0);

  onnx::TensorProto i8;
  i8.set_data_type(onnx::TensorProto::INT8);
  i8.add_dims(2);
  i8.add_int32_data(-5);
  i8.add_int32_data(127);
  Tensor it = tensor_from_proto(i8, ".");
  EXPECT_EQ(it.get(0), -5.0);
  EXPECT_EQ(it.get(1), 127.0);

  onnx::TensorProto l;
  l.set_data_type(onnx::TensorProto::INT64);  // scalar
  l.add_int64_data(int64_t{1} << 50);
  EXPECT_EQ(tensor_from_proto(l, ".").get_int(0), int64_t{1} << 50);

  onnx::TensorProto u;
  u.set_data_type(onnx::TensorProto::UINT32);
  u.add_dims(1);
  u.add_uint64_data(4000000000u);
  EXPECT_EQ(tensor_from_proto(u, ".").get(0), 4000000000.0);

  onnx::TensorProto f;
  f.set_name("f");
  f.set_data_type(onnx::TensorProto::FLOAT);
  f.add_dims(3);
  f.add_float_data(1.5f);
  expect_error([&] { tensor_from_proto(f, "."); }, "tensor 'f'");

  // Strings live in string_data; raw_data for them is refused by what it is (red-team round 56).
  onnx::TensorProto s;
  s.set_name("s");
  s.set_data_type(onnx::TensorProto::STRING);
  s.add_dims(1);
  s.set_raw_data("abc");
  expect_error([&] { tensor_from_proto(s, "."); }, "string tensors cannot use raw_data");
}

TEST(TensorIo, LoadTestDataSets) {
  TempDir d;
  for (int s : {10, 0, 2, 1}) {
    fs::path dir = d.path / ("test_data_set_" + std::to_string(s));
    fs::create_directories(dir);
    for (int k : {0, 11, 2, 5, 1, 3, 4, 6, 7, 8, 9, 10}) {  // input_11 must sort after input_2
      Tensor t(DType::i64, {1});
      t.set_int(0, s * 100 + k);
      write_tensor_pb((dir / ("input_" + std::to_string(k) + ".pb")).string(), t, "in" + std::to_string(k));
    }
    write_tensor_pb((dir / "output_0.pb").string(), Tensor(DType::f32, {2}), "out");
  }
  auto cases = load_test_data_sets(d.path.string());
  ASSERT_EQ(cases.size(), 4u);
  int sets[] = {0, 1, 2, 10};
  for (size_t i = 0; i < 4; ++i) {
    ASSERT_EQ(cases[i].inputs.size(), 12u);
    ASSERT_EQ(cases[i].outputs.size(), 1u);
    for (int k = 0; k < 12; ++k) EXPECT_EQ(cases[i].inputs[k].get_int(0), sets[i] * 100 + k);
    EXPECT_EQ(cases[i].input_names[11], "in11");
    EXPECT_EQ(cases[i].output_names[0], "out");
  }
  expect_error([&] { load_test_data_sets(d / "nope"); }, "nope");
}

TEST(OnnxImport, SmallModelStructure) {
  TempDir d;
  onnx::ModelProto m = small_model();
  auto* g = m.mutable_graph();
  // x has a symbolic batch dim; w also listed as an input (IR < 4 style) must stay a constant.
  set_tensor_type(g->mutable_input(0), "x", onnx::TensorProto::FLOAT, {"batch", "6"});
  set_tensor_type(g->add_input(), "w", onnx::TensorProto::FLOAT, {"6"});
  // Out-of-order nodes: Gemm-like consumer listed before its producer; a Constant node;
  // an unnamed node with every attribute kind and an omitted optional input.
  auto* relu = g->add_node();
  relu->set_op_type("Clip");
  relu->set_name("clip");
  relu->add_input("z");
  relu->add_input("");
  relu->add_input("c");
  relu->add_output("out");
  auto* c = g->add_node();
  c->set_op_type("Constant");
  c->add_output("c");
  auto* cv = c->add_attribute();
  cv->set_name("value_floats");
  cv->set_type(onnx::AttributeProto::FLOATS);
  cv->add_floats(2.5f);
  auto* n = g->add_node();
  n->set_op_type("Custom");
  n->set_domain("com.example");
  n->add_input("y");
  n->add_output("z");
  auto add_attr = [&](const char* name, onnx::AttributeProto::AttributeType t) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(t);
    return a;
  };
  add_attr("i", onnx::AttributeProto::INT)->set_i(-3);
  add_attr("f", onnx::AttributeProto::FLOAT)->set_f(0.25f);
  add_attr("s", onnx::AttributeProto::STRING)->set_s("abc");
  auto* ints = add_attr("ints", onnx::AttributeProto::INTS);
  ints->add_ints(1);
  ints->add_ints(2);
  add_attr("floats", onnx::AttributeProto::FLOATS)->add_floats(1.5f);
  add_attr("strings", onnx::AttributeProto::STRINGS)->add_strings("q");
  auto* ta = add_attr("t", onnx::AttributeProto::TENSOR)->mutable_t();
  ta->set_data_type(onnx::TensorProto::INT64);
  ta->add_dims(2);
  ta->add_int64_data(7);
  ta->add_int64_data(8);
  auto* op = m.add_opset_import();
  op->set_domain("com.example");
  op->set_version(3);
  g->mutable_output(0)->set_name("out");

  Graph gr = load_onnx(save_model(d, m));
  EXPECT_EQ(gr.opset, 17);
  ASSERT_EQ(gr.inputs.size(), 1u);
  const Value& x = gr.values[gr.inputs[0]];
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.dtype, DType::f32);
  EXPECT_EQ(x.shape, (Shape{-1, 6}));
  EXPECT_FALSE(x.shape_known);
  int w = gr.find_value("w");
  ASSERT_GE(w, 0);
  ASSERT_TRUE(gr.values[w].constant.has_value());
  EXPECT_EQ(gr.values[w].constant->get(5), 5.5);
  int cid = gr.find_value("c");
  ASSERT_TRUE(gr.values[cid].constant.has_value());
  EXPECT_EQ(gr.values[cid].constant->shape(), (Shape{1}));
  EXPECT_EQ(gr.values[cid].constant->get(0), 2.5);

  ASSERT_EQ(gr.nodes.size(), 3u);  // the Constant was folded away
  EXPECT_EQ(gr.nodes[0].op_type, "Add");
  EXPECT_EQ(gr.nodes[0].name, "Add_0");
  EXPECT_EQ(gr.nodes[1].op_type, "Custom");
  EXPECT_EQ(gr.nodes[1].name, "Custom_3");
  EXPECT_EQ(gr.nodes[1].domain, "com.example");
  EXPECT_EQ(gr.nodes[1].opset, 3);
  EXPECT_EQ(gr.nodes[0].opset, 17);
  const Node& cn = gr.nodes[1];
  EXPECT_EQ(cn.attr_i("i", 0), -3);
  EXPECT_EQ(cn.attr_f("f", 0), 0.25);
  EXPECT_EQ(cn.attr_s("s", ""), "abc");
  EXPECT_EQ(cn.attr_ints("ints"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(cn.attr_floats("floats"), (std::vector<double>{1.5}));
  EXPECT_EQ(std::get<std::vector<std::string>>(cn.attrs.at("strings")), (std::vector<std::string>{"q"}));
  ASSERT_NE(cn.attr_t("t"), nullptr);
  EXPECT_EQ(cn.attr_t("t")->get_int(1), 8);
  const Node& clip = gr.nodes[2];
  EXPECT_EQ(clip.name, "clip");
  ASSERT_EQ(clip.inputs.size(), 3u);
  EXPECT_EQ(clip.inputs[1], -1);
  EXPECT_EQ(clip.inputs[2], cid);
  ASSERT_EQ(gr.outputs.size(), 1u);
  EXPECT_EQ(gr.values[gr.outputs[0]].name, "out");
  EXPECT_EQ(gr.values[gr.outputs[0]].producer, 2);
}

TEST(OnnxImport, ExternalData) {
  TempDir d;
  onnx::ModelProto m = small_model(16);
  make_external(m, "weights.bin", &d, 40);
  Graph g = load_onnx(save_model(d, m));
  const Value& w = g.values[g.find_value("w")];
  ASSERT_TRUE(w.constant.has_value());
  for (int i = 0; i < 16; ++i) EXPECT_EQ(w.constant->get(i), 0.5 + i);
  // The same bytes from memory resolve against base_dir.
  std::string bytes;
  ASSERT_TRUE(m.SerializeToString(&bytes));
  Graph g2 = load_onnx_from_bytes(bytes, d.path.string());
  EXPECT_EQ(g2.values[g2.find_value("w")].constant->get(15), 15.5);
}

TEST(OnnxImport, BadInputsAreErrors) {
  TempDir d;
  expect_error([&] { load_onnx(d / "no_such_model.onnx"); }, "No such file");
  expect_error([&] { load_onnx(d / "no_such_model.onnx"); }, "no_such_model.onnx");

  write_bytes(d / "text.onnx", "hello, this is a text file and not an ONNX model\n");
  expect_error([&] { load_onnx(d / "text.onnx"); }, "not a valid ONNX model");

  std::string full;
  ASSERT_TRUE(small_model(1024).SerializeToString(&full));
  write_bytes(d / "truncated.onnx", full.substr(0, full.size() / 2));
  expect_error([&] { load_onnx(d / "truncated.onnx"); }, "protobuf parse failed");

  {
    TempDir e;
    onnx::ModelProto m = small_model();
    make_external(m, "gone.bin", nullptr, 0);
    expect_error([&] { load_onnx(save_model(e, m)); }, "gone.bin");
  }
  for (std::string loc : {"../../etc/passwd", "/etc/passwd", "sub/../../x.bin"}) {
    TempDir e;
    onnx::ModelProto m = small_model();
    make_external(m, loc, nullptr, 0);
    expect_error([&] { load_onnx(save_model(e, m)); }, "escapes the model folder");
  }
  {
    onnx::ModelProto m = small_model();
    m.mutable_graph()->mutable_node(0)->set_input(1, "nope");
    m.mutable_graph()->mutable_node(0)->set_name("adder");
    expect_error([&] { load_onnx(save_model(d, m, "undef.onnx")); }, "node 'adder' (Add): input 'nope' is not defined");
  }
  {
    onnx::ModelProto m = small_model();
    auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
    a->set_name("branches");
    a->set_type(onnx::AttributeProto::GRAPHS);
    a->add_graphs()->set_name("sub");
    // On an ai.onnx op the schema check rejects the attribute first, as onnxruntime does.
    expect_error([&] { load_onnx(save_model(d, m, "sub.onnx")); }, "Unrecognized attribute: branches");
  }
  {
    onnx::ModelProto m;
    m.set_ir_version(8);
    expect_error([&] { load_onnx(save_model(d, m, "nograph.onnx")); }, "no graph");
    m.mutable_graph()->set_name("empty");
    expect_error([&] { load_onnx(save_model(d, m, "empty.onnx")); }, "no nodes and no outputs");
  }
}

TEST(OnnxImport, SharedModels) {
  fs::path models = shared_dir() / "models";
  if (!fs::is_directory(models)) GTEST_SKIP() << "no shared models at " << models << " (set FUSOR_SHARED)";
  int loaded = 0;
  for (const auto& e : fs::directory_iterator(models)) {
    fs::path file = e.path() / "model.onnx";
    if (!fs::exists(file)) continue;
    SCOPED_TRACE(file.string());
    Graph g = load_onnx(file.string());
    ++loaded;
    EXPECT_GT(g.nodes.size(), 3u);
    EXPECT_GE(g.inputs.size(), 1u);
    EXPECT_LE(g.inputs.size(), 8u);
    EXPECT_GE(g.outputs.size(), 1u);
    EXPECT_GE(g.opset, 17);
    for (const Node& n : g.nodes) EXPECT_NE(n.op_type, "Constant");
    for (int i : g.inputs) EXPECT_TRUE(g.values[i].shape_known) << g.values[i].name;
    auto cases = load_test_data_sets(e.path().string());
    ASSERT_FALSE(cases.empty());
    ASSERT_EQ(cases[0].inputs.size(), g.inputs.size());
    for (size_t k = 0; k < g.inputs.size(); ++k) {
      EXPECT_EQ(cases[0].inputs[k].dtype(), g.values[g.inputs[k]].dtype);
      EXPECT_EQ(cases[0].inputs[k].shape(), g.values[g.inputs[k]].shape);
    }
    EXPECT_EQ(cases[0].outputs.size(), g.outputs.size());
    if (e.path().filename() == "gpt2_tiny") {
      EXPECT_EQ(g.opset, 18);
      // These two live in model.onnx.data; random weights are never all zero.
      for (const char* name : {"m.wte.weight", "m.wpe.weight"}) {
        int id = g.find_value(name);
        ASSERT_GE(id, 0) << name;
        ASSERT_TRUE(g.values[id].constant.has_value()) << name;
        const Tensor& t = *g.values[id].constant;
        int64_t nonzero = 0;
        for (int64_t i = 0; i < t.numel(); ++i) nonzero += t.get(i) != 0.0 && std::isfinite(t.get(i));
        EXPECT_GT(nonzero, t.numel() / 2) << name;
      }
    }
  }
  EXPECT_GE(loaded, 1);
}

TEST(GraphBuilder, BuildsSortedGraph) {
  GraphBuilder b("tiny");
  int x = b.input("x", DType::f32, {2, 3});
  Tensor w(DType::f32, {2, 3});
  w.fill(1.0);
  int wc = b.constant("w", w);
  int y = b.op("Add", {x, wc});
  auto parts = b.op_multi("Split", {y}, {{"axis", int64_t{1}}}, 3);
  int z = b.op("Gemm", {parts[0], wc, -1}, {{"transB", int64_t{1}}, {"alpha", 0.5}});
  b.output(z);
  b.output(parts[2]);
  expect_error([&] { b.op("Relu", {42}); }, "42");
  expect_error([&] { b.input("x", DType::f32, {1}); }, "already used");
  Graph g = b.build();
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].name, "Add_0");
  EXPECT_EQ(g.nodes[1].op_type, "Split");
  EXPECT_EQ(g.nodes[1].outputs.size(), 3u);
  EXPECT_EQ(g.nodes[2].attr_i("transB", 0), 1);
  EXPECT_EQ(g.nodes[2].attr_f("alpha", 1), 0.5);
  EXPECT_EQ(g.nodes[2].inputs[2], -1);
  EXPECT_EQ(g.values[z].producer, 2);
  EXPECT_TRUE(g.values[wc].constant.has_value());
  EXPECT_EQ(g.inputs, (std::vector<int>{x}));
  EXPECT_EQ(g.outputs, (std::vector<int>{z, parts[2]}));
}

// ---- the CLI on bad input: one readable line on stderr, non-zero exit, never a crash ----
namespace fusor {
namespace {

struct CliResult {
  int status = -1;
  std::string err;
};

CliResult run_cli(const std::string& args) {
  const char* bin = std::getenv("FUSOR_BIN");
  std::string exe = bin ? bin : "./fusor";
  TempDir d;
  std::string cmd = exe + " " + args + " >/dev/null 2>" + (d / "err.txt");
  int rc = std::system(cmd.c_str());
  CliResult r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
  r.err = read_bytes(d / "err.txt");
  return r;
}

void expect_cli_error(const std::string& args, const std::string& substr) {
  CliResult r = run_cli(args);
  EXPECT_NE(r.status, 0) << args;
  EXPECT_LT(r.status, 128) << "crashed: " << args;
  EXPECT_NE(r.err.find(substr), std::string::npos) << args << " -> " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "expected one line: " << r.err;
}

// The builder indexes value names (a linear search per value was quadratic); names changed
// through graph() are seen by its next call.
TEST(GraphBuilder, NamesStayUniqueAfterEditsThroughGraph) {
  GraphBuilder b("edits");
  const int x = b.input("x", DType::f32, {2});
  b.graph().values[static_cast<size_t>(x)].name = "renamed";
  EXPECT_NO_THROW(b.input("x", DType::f32, {2}));  // the old name is free again
  expect_error([&] { b.input("renamed", DType::f32, {2}); }, "value name 'renamed' is already used");
  b.constant("Relu_0_out0", Tensor(DType::f32, {2}));  // the natural name of the next op's output
  const int r = b.op("Relu", {x});
  EXPECT_NE(b.graph().values[static_cast<size_t>(r)].name, "Relu_0_out0");
  b.output(r);
  Graph g = b.build();
  std::set<std::string> names;
  for (const Value& v : g.values) EXPECT_TRUE(names.insert(v.name).second) << "duplicate " << v.name;
  // An emptied builder starts a fresh name index.
  EXPECT_NO_THROW(b.input("x", DType::f32, {2}));
}

TEST(Cli, BadInputsGiveOneLineErrors) {
  if (!std::getenv("FUSOR_BIN") && !fs::exists("./fusor")) GTEST_SKIP() << "fusor binary not found (FUSOR_BIN unset)";
  TempDir d;
  expect_cli_error("run " + (d / "missing.onnx"), "cannot open");
  write_bytes(d / "text.onnx", "this is not a model\n");
  expect_cli_error("run " + (d / "text.onnx"), "not a valid ONNX model");
  {
    std::string bytes;
    small_model(4096).SerializeToString(&bytes);
    write_bytes(d / "trunc.onnx", bytes.substr(0, bytes.size() / 2));
    expect_cli_error("run " + (d / "trunc.onnx"), "not a valid ONNX model");
  }
  {
    onnx::ModelProto m = small_model();
    m.mutable_graph()->mutable_node(0)->set_op_type("FrobnicateOp");
    m.mutable_graph()->mutable_node(0)->set_name("frob_1");
    TempDir md;
    save_model(md, m);
    CliResult r = run_cli("run " + (md / "model.onnx"));
    EXPECT_NE(r.status, 0);
    EXPECT_NE(r.err.find("frob_1"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("FrobnicateOp"), std::string::npos) << r.err;
  }
  {
    // A .pb input whose shape contradicts the model's declared input.
    TempDir md;
    save_model(md, small_model(6));
    fs::create_directories(md.path / "in");
    Tensor wrong(DType::f32, {7});
    wrong.fill(1.0);
    write_tensor_pb(md / "in/input_0.pb", wrong, "x");
    expect_cli_error("run " + (md / "model.onnx") + " --inputs " + (md / "in"), "expects shape");
  }
  {
    TempDir md;
    onnx::ModelProto m = small_model();
    make_external(m, "weights.bin", nullptr, 0);  // file never written
    save_model(md, m);
    expect_cli_error("run " + (md / "model.onnx"), "weights.bin");
  }
  {
    TempDir md;
    onnx::ModelProto m = small_model();
    make_external(m, "../../etc/passwd", nullptr, 0);
    save_model(md, m);
    expect_cli_error("run " + (md / "model.onnx"), "escapes the model folder");
  }
  expect_cli_error("run " + (d / "missing.onnx") + " --backend nosuch", "cannot open");
}

TEST(Cli, UnknownBackendIsAnError) {
  if (!std::getenv("FUSOR_BIN") && !fs::exists("./fusor")) GTEST_SKIP() << "fusor binary not found (FUSOR_BIN unset)";
  TempDir md;
  save_model(md, small_model());
  expect_cli_error("run " + (md / "model.onnx") + " --backend nosuch", "unknown or not built-in backend");
}

TEST(Cli, ConformWritesJson) {
  if (!std::getenv("FUSOR_BIN") && !fs::exists("./fusor")) GTEST_SKIP() << "fusor binary not found (FUSOR_BIN unset)";
  TempDir d;
  const std::string model = std::string(FUSOR_SOURCE_DIR) + "/examples/gpt2_tiny";
  CliResult r = run_cli("conform " + model + " --backend ref --backend cpu --atol 1e-5 --json " + (d / "r.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(read_bytes(d / "r.json"));
  EXPECT_EQ(j["summary"]["ref"]["passed"], 1);
  EXPECT_EQ(j["summary"]["cpu"]["passed"], 1);
  ASSERT_EQ(j["cases"].size(), 2u);
  for (auto& c : j["cases"]) {
    EXPECT_EQ(c["status"], "passed");
    EXPECT_LT(c["max_abs"].get<double>(), 1e-5);
    EXPECT_GT(c["max_abs"].get<double>(), 0.0);  // a real comparison ran
  }
}

}  // namespace
}  // namespace fusor

// The one writer of reports and files (CLI --json/--dot/--trace, diff --extract, .pb/.npy):
// the bytes as given, and a failure (full disk, a folder, a missing folder) is one line with
// the caller's tag, found after close() flushes.
TEST(TensorIo, WriteFileChecksTheStreamAfterClose) {
  TempDir d;
  const std::string p = d / "out.json", bytes = std::string("{\"a\": 1}\n\0x", 11);
  write_file(p, bytes, "trace");
  EXPECT_EQ(read_bytes(p), bytes);
  auto fails = [](const std::string& path, const std::string& component) {
    try {
      write_file(path, "x", component);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(fails(d.path.string(), "diff").rfind("[diff] cannot write '" + d.path.string() + "'", 0), 0u);
  EXPECT_NE(fails(d / "no/such/x.json", "explain").find("[explain] cannot write"), std::string::npos);
  if (fs::exists("/dev/full"))
    EXPECT_NE(fails("/dev/full", "conform").find("[conform] cannot write '/dev/full'"), std::string::npos);
}

// A folder stands for its model.onnx (CLI and Python share this); other paths are left as
// they are for the loader to report.
TEST(TensorIo, ModelPathTakesAFoldersModelOnnx) {
  TempDir d;
  EXPECT_EQ(model_path(d.path.string()), (d.path / "model.onnx").string());
  EXPECT_EQ(model_path(d / "m.onnx"), d / "m.onnx");
  const std::string loop = d / "loop";
  fs::create_directory_symlink(loop, loop);
  EXPECT_EQ(model_path(loop), loop);  // no filesystem_error
}

// Red-team round 9 (F19): an external-data location naming a folder or a FIFO inside the model
// folder said "not found" although the path exists; now the message says what it is. Nothing
// is read from the FIFO (no hang), and a missing file still says "not found".
TEST(OnnxImport, ExternalDataThatIsNoRegularFileSaysSo) {
  TempDir d;
  fs::create_directory(d.path / "sub");
  ASSERT_EQ(::mkfifo((d / "f.bin").c_str(), 0600), 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"sub", "is a directory, not a regular file (location 'sub')"},
      {"f.bin", "is not a regular file (FIFO, socket or device) (location 'f.bin')"},
      {"gone.bin", "not found (location 'gone.bin')"}};
  for (const auto& c : cases) {
    const std::string& loc = c.first;  // (a structured binding cannot be captured by clang 14)
    const std::string& msg = c.second;
    onnx::ModelProto m = small_model();
    make_external(m, loc, nullptr, 0);
    expect_error([&] { load_onnx(save_model(d, m, loc + ".onnx")); }, "tensor 'w': external data file '" + (d / loc) + "' " + msg);
  }
}

namespace {
// small_model(8) with w [2, 4] a sparse initializer: values `vals` at `idx` ([NNZ] or [NNZ, 2]).
onnx::ModelProto sparse_model(const std::vector<float>& vals, const std::vector<int64_t>& idx, Shape idx_dims,
                              Shape dims = {2, 4}) {
  onnx::ModelProto m = small_model(8);
  auto* g = m.mutable_graph();
  g->clear_initializer();
  set_tensor_type(g->mutable_input(0), "x", onnx::TensorProto::FLOAT, {"2", "4"});
  set_tensor_type(g->mutable_output(0), "y", onnx::TensorProto::FLOAT, {"2", "4"});
  auto* sp = g->add_sparse_initializer();
  for (auto d : dims) sp->add_dims(d);
  auto* v = sp->mutable_values();
  v->set_name("w");
  v->set_data_type(onnx::TensorProto::FLOAT);
  v->add_dims(static_cast<int64_t>(vals.size()));
  for (float f : vals) v->add_float_data(f);
  auto* i = sp->mutable_indices();
  i->set_data_type(onnx::TensorProto::INT64);
  for (auto d : idx_dims) i->add_dims(d);
  for (int64_t k : idx) i->add_int64_data(k);
  return m;
}
}  // namespace

// onnx.proto's SparseTensorProto (sparse initializers, Constant's sparse_value) is read into its
// dense tensor, as onnxruntime does; malformed ones are one-line [onnx] errors.
TEST(OnnxImport, SparseTensorsAreStoredDense) {
  TempDir d;
  const Tensor x = random_tensor(DType::f32, {2, 4}, 7);
  std::vector<float> dense(8, 0.0f);
  dense[1] = 1.5f, dense[6] = -2.25f;
  // Linear indices and [NNZ, rank] coordinates give the same tensor and the same run.
  for (const auto& m : {sparse_model({1.5f, -2.25f}, {1, 6}, {2}), sparse_model({1.5f, -2.25f}, {0, 1, 1, 2}, {2, 2})}) {
    Graph g = load_onnx(save_model(d, m));
    const Value& w = g.values[g.find_value("w")];
    ASSERT_TRUE(w.constant.has_value());
    ASSERT_EQ(w.constant->shape(), (Shape{2, 4}));
    for (int k = 0; k < 8; ++k) EXPECT_EQ(w.constant->get(k), dense[k]) << k;
    for (const char* be : {"ref", "cpu"}) {
      const Tensor y = Session(g, be).run({x})[0];
      for (int k = 0; k < 8; ++k) EXPECT_EQ(y.data<float>()[k], x.data<float>()[k] + dense[k]) << be << " " << k;
    }
  }
  {  // Constant(sparse_value), int64 values, read by a node.
    onnx::ModelProto m = small_model(8);
    auto* g = m.mutable_graph();
    g->clear_initializer();
    auto* c = g->add_node();
    c->set_op_type("Constant");
    c->add_output("w");
    auto* a = c->add_attribute();
    a->set_name("sparse_value");
    a->set_type(onnx::AttributeProto::SPARSE_TENSOR);
    auto* sp = a->mutable_sparse_tensor();
    sp->add_dims(8);
    sp->mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
    sp->mutable_values()->add_dims(1);
    sp->mutable_values()->add_float_data(4.0f);
    sp->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
    sp->mutable_indices()->add_dims(1);
    sp->mutable_indices()->add_int64_data(7);
    Graph gr = load_onnx(save_model(d, m, "const.onnx"));
    const Tensor xin = random_tensor(DType::f32, {8}, 3);
    const Tensor y = Session(gr, "cpu").run({xin})[0];
    for (int k = 0; k < 8; ++k) EXPECT_EQ(y.data<float>()[k], xin.data<float>()[k] + (k == 7 ? 4.0f : 0.0f)) << k;
  }
  expect_error([&] { load_onnx(save_model(d, sparse_model({1, 2}, {1, 8}, {2}), "oob.onnx")); }, "sparse tensor 'w': index 8 of value 1 is outside [2, 4]");
  expect_error([&] { load_onnx(save_model(d, sparse_model({1, 2}, {0, 4, 1, 0}, {2, 2}), "oob2.onnx")); }, "index 4 of value 0 is outside dim 1");
  expect_error([&] { load_onnx(save_model(d, sparse_model({1, 2}, {6, 1}, {2}), "order.onnx")); }, "not in strictly ascending order");
  expect_error([&] { load_onnx(save_model(d, sparse_model({1, 2}, {3, 3}, {2}), "dup.onnx")); }, "not in strictly ascending order");
  expect_error([&] { load_onnx(save_model(d, sparse_model({1, 2}, {1, 2, 3}, {3}), "shape.onnx")); }, "are neither [2] nor [2, 2]");
  expect_error([&] { load_onnx(save_model(d, sparse_model({1}, {5}, {1}, {1 << 20, 1 << 20}), "huge.onnx")); }, "would take 4398046511104 bytes");
  expect_error([&] { load_onnx(save_model(d, sparse_model({1}, {5}, {1}, {2, -4}), "neg.onnx")); }, "negative dimension");
  {  // All zeros: no values, no indices (onnx.proto asks for indices only where there are values).
    onnx::ModelProto m = sparse_model({}, {}, {0});
    m.mutable_graph()->mutable_sparse_initializer(0)->clear_indices();
    Graph g = load_onnx(save_model(d, m, "zeros.onnx"));
    const Tensor& w = *g.values[g.find_value("w")].constant;
    ASSERT_EQ(w.shape(), (Shape{2, 4}));
    for (int k = 0; k < 8; ++k) EXPECT_EQ(w.get(k), 0.0);
  }
  {  // Strings: a few bytes of file may not ask for a 2^28-element dense tensor (~8 GiB of strings).
    onnx::ModelProto m = sparse_model({1}, {5}, {1}, {int64_t{1} << 28});
    auto* v = m.mutable_graph()->mutable_sparse_initializer(0)->mutable_values();
    v->clear_float_data();
    v->set_data_type(onnx::TensorProto::STRING);
    v->add_string_data("s");
    expect_error([&] { load_onnx(save_model(d, m, "strings.onnx")); }, "are densified");
  }
}
