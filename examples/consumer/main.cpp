// Links the installed fusor (find_package(fusor) -> fusor::fusor): builds y = relu(x * w + b)
// with the C++ graph builder, runs it fused on the "cpu" backend (or argv[1]) and checks it
// against the op-by-op reference backend. Exit 0 when they agree.
#include <cmath>
#include <cstdio>
#include <exception>

#include "frontend/builder.h"
#include "runtime/session.h"

int main(int argc, char** argv) {
  try {
    const std::string backend = argc > 1 ? argv[1] : "cpu";
    fusor::GraphBuilder b;
    int x = b.input("x", fusor::DType::f32, {4, 8});
    fusor::Tensor w(fusor::DType::f32, {8, 8}), bias(fusor::DType::f32, {8});
    for (int64_t i = 0; i < w.numel(); ++i) w.set(i, std::sin(0.7 * static_cast<double>(i)));
    for (int64_t i = 0; i < bias.numel(); ++i) bias.set(i, 0.1 * static_cast<double>(i) - 0.3);
    int y = b.op("Relu", {b.op("Add", {b.op("MatMul", {x, b.constant("w", w)}), b.constant("b", bias)})});
    b.output(y);
    fusor::Graph g = b.build();

    auto inputs = fusor::random_inputs(g, 42);
    fusor::Session fused(g, backend), ref(g, "ref");
    fusor::Tensor out = fused.run(inputs).at(0), want = ref.run(inputs).at(0);
    auto c = fusor::compare_tensors(out, want, 1e-5, 1e-6);
    std::printf("fusor %s consumer: %s on %s, %lld outputs, max abs diff vs ref %.3g: %s\n", FUSOR_VERSION,
                fusor::shape_str(out.shape()).c_str(), backend.c_str(), static_cast<long long>(out.numel()), c.max_abs,
                c.ok ? "OK" : c.message.c_str());
    return c.ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: error: %s\n", e.what());
    return 2;
  }
}
