// `fusor explain`: the fused plan as a table, its totals, and a Graphviz picture.
#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <vector>
#include <cstdlib>
#include <sstream>

#include "backends/backend.h"
#include "ir/kernel_spec.h"
#include "ir/partition.h"
#include "runtime/host_loop.h"
#include "runtime/segments.h"
#include "runtime/session.h"
#include "runtime/tensor_io.h"
#include "tools/commands.h"
#ifdef FUSOR_HAVE_CUDA
#include "backends/cuda/cuda_backend.h"
#endif

extern char** environ;

namespace fusor {

static std::string human(int64_t b) {
  char buf[32];
  if (b >= (1 << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB", b / 1048576.0);
  else if (b >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  return buf;
}


// A DOT quoted string holding model text (value, node and op names): quotes and backslashes
// escaped, control characters as printable() writes them. Unescaped, a name like
// `x", image="/etc/passwd` closed the label and added attributes of its own to the graph.
std::string dot_quoted(const std::string& s) {
  std::string out;
  for (char c : printable(s)) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

void write_plan_dot(const Plan& p, const std::string& path) {
  std::ostringstream f;
  f << "digraph fusor {\n  rankdir=TB;\n  node [shape=box, fontsize=10];\n";
  for (size_t b = 0; b < p.buffers.size(); ++b) {
    const Buffer& buf = p.buffers[b];
    const char* color = buf.role == Buffer::Role::input ? "lightblue" : buf.role == Buffer::Role::output ? "palegreen"
                        : buf.role == Buffer::Role::constant ? "lightgray" : "white";
    f << "  b" << b << " [shape=note, style=filled, fillcolor=" << color << ", label=\"" << dot_quoted(buf.name) << "\\n"
      << shape_str(buf.shape) << "\"];\n";
  }
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const KernelSpec& k = p.kernels[i];
    f << "  subgraph cluster_k" << i << " {\n    label=\"" << dot_quoted(k.name) << " (" << fusion_kind_name(k.kind)
      << ")\"; style=rounded; color=blue;\n";
    for (size_t j = 0; j < k.fused_nodes.size(); ++j)
      f << "    k" << i << "_" << j << " [label=\"" << dot_quoted(k.fused_ops[j]) << "\\n" << dot_quoted(k.fused_nodes[j]) << "\"];\n";
    if (k.fused_nodes.empty()) f << "    k" << i << "_0 [label=\"" << dot_quoted(k.name) << "\"];\n";
    f << "  }\n";
    for (int b : k.input_buffers()) f << "  b" << b << " -> k" << i << "_0;\n";
    for (int b : k.output_buffers())
      f << "  k" << i << "_" << (k.fused_nodes.empty() ? 0 : k.fused_nodes.size() - 1) << " -> b" << b << ";\n";
  }
  f << "}\n";
  write_file(path, f.str(), "explain");
}

int cmd_explain(const ExplainArgs& a) {
  Graph g = load_model(a.model);
  // Real inputs where there are some: a shape may follow an input's values (TopK's k).
  Graph sg = specialize(g, choose_inputs(g, a.model, a.inputs_dir, !a.dims.shapes.empty() || !a.dims.dims.empty(), 0, a.dims, "explain").inputs);
  // The plan the named backend builds (its fusion options), or the default one without a backend.
  CompileOptions co;
  co.fusion = !a.no_fusion;
  const FusionOptions fo = a.backend.empty() ? default_fusion_options(co) : make_backend(a.backend)->fusion_options(co);
  Plan p = build_plan(without_string_nodes(sg), fo);  // string nodes run on the host (listed as breaks)
  std::printf("%-4s %-7s %-40s %6s %12s %12s\n", "#", "kind", "ops fused", "inputs", "read", "written");
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const KernelSpec& k = p.kernels[i];
    std::string ops;
    for (auto& o : k.fused_ops) ops += (ops.empty() ? "" : "+") + o;
    if (ops.size() > 40) ops = ops.substr(0, 37) + "...";
    std::printf("%-4zu %-7s %-40s %6zu %12s %12s\n", i, fusion_kind_name(k.kind), ops.c_str(), k.input_buffers().size(),
                human(kernel_bytes_read(p, k)).c_str(), human(kernel_bytes_written(p, k)).c_str());
  }
  // DequantizeLinear -> MatMul fused: the weight stays quantized in the plan (1 byte per element).
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const KernelSpec& k = p.kernels[i];
    if (!k.matmul || !k.matmul->dequant_b) continue;
    const Buffer& w = p.buffers[k.matmul->b_buffer];
    std::printf("  kernel %zu reads B as %s '%s' %s (%s; %s fp32), dequantized in the kernel (%s scale)\n", i, dtype_name(w.dtype),
                printable(w.name).c_str(), shape_str(w.shape).c_str(), human(w.nbytes()).c_str(), human(shape_numel(w.shape) * 4).c_str(),
                k.matmul->dequant_b->dim == 1 ? "per-tensor" : "per-axis");
  }
  // How row kernels read their rows (KernelSpec::row_registers / online_max, set in ir/).
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    if (p.kernels[i].row_registers > 0)
      std::printf("  kernel %zu keeps its rows in registers (%lld per thread): one read of each row\n", i,
                  static_cast<long long>(p.kernels[i].row_registers));
    if (p.kernels[i].online_max >= 0)
      std::printf("  kernel %zu computes the row max and sum of exp in one pass (online softmax)\n", i);
    // Contractions a row kernel computes itself (KernelSpec::dots, row_product).
    for (const InlineDot& d : p.kernels[i].dots)
      std::printf("  kernel %zu computes a %lldx%lldx%lld MatMul inline, element by element (its product is never stored)\n", i,
                  static_cast<long long>(d.mm.m), static_cast<long long>(d.mm.n), static_cast<long long>(d.mm.k));
    // Gathers read by this kernel (kernel_spec.h gathered loads): no kernel copies the rows.
    for (const Load& l : p.kernels[i].loads)
      if (l.gathered())
        std::printf("  kernel %zu looks up rows of '%s' %s itself (%s fused: the rows are never copied first)\n", i,
                    printable(p.buffers[l.buffer].name).c_str(), shape_str(p.buffers[l.buffer].shape).c_str(),
                    printable(l.gather_node).c_str());
    if (const auto& rp = p.kernels[i].row_product)
      std::printf("  kernel %zu multiplies each row by '%s' (a MatMul with N = %lld): the row's weights are never stored\n", i,
                  printable(p.buffers[rp->b_buffer].name).c_str(), static_cast<long long>(rp->n));
  }
  std::printf("\nONNX nodes %d -> primitive nodes %zu -> kernels %zu\n", p.original_nodes, p.graph.nodes.size(),
              p.kernels.size());
  std::printf("bytes moved: unfused %s, fused %s (%.2fx less)\n", human(p.bytes_unfused).c_str(),
              human(p.bytes_fused).c_str(), p.bytes_fused ? double(p.bytes_unfused) / double(p.bytes_fused) : 0.0);
  std::printf("arena: peak %s vs naive %s (%.2fx less)\n", human(p.arena_bytes).c_str(), human(p.naive_bytes).c_str(),
              p.arena_bytes ? double(p.naive_bytes) / double(p.arena_bytes) : 0.0);
  if (!a.backend.empty()) {
    // Placement only: which nodes this backend would leave to the host (nothing is compiled).
    auto b = make_backend(a.backend);
    std::vector<GraphBreak> breaks = find_graph_breaks(*b, sg, co);
    if (breaks.empty()) std::printf("graph breaks on %s: none (the whole plan runs on it)\n", a.backend.c_str());
    else if (a.no_fallback)
      throw Unsupported("explain", a.backend + " cannot run node '" + breaks[0].node + "' (" + breaks[0].op + "): " +
                                       breaks[0].reason + " (" + std::to_string(breaks.size()) + " node(s) in all; --no-fallback)");
    else {
      std::printf("graph breaks on %s: %zu node(s) run on the host (ref kernels) between %s segments\n", a.backend.c_str(),
                  breaks.size(), a.backend.c_str());
      for (const GraphBreak& gb : breaks) std::printf("  %s\n", describe(gb).c_str());
      for (const std::string& line : describe_host_loops(*b, sg, co)) std::printf("  %s\n", line.c_str());
    }
  }
  if (a.source == "cuda") {
#ifdef FUSOR_HAVE_CUDA
    for (const KernelSpec& k : p.kernels) {
      std::optional<LibraryGemm> lib = cuda_library_gemm(k, p);
      std::optional<LibraryConv> conv = cuda_library_conv(k, p);
      std::string src;
      try {
        src = cuda_kernel_source(k, p, lib ? &*lib : nullptr, conv ? &*conv : nullptr);
      } catch (const Unsupported& e) {
        // A graph break: the kernel's nodes run on the host (ref), so there is no source.
        std::printf("\n// ---- %s (runs on the host: %s)\n", k.name.c_str(), e.what());
        continue;
      }
      const char* how = conv  ? (src.empty() ? " (cudnnConvolutionForward writes the output: no kernel)" : " (cudnnConvolutionForward, then this epilogue)")
                        : !lib ? ""
                        : src.empty() ? " (cublasLtMatmul with its own epilogue: no kernel)"
                                      : " (cublasLtMatmul, then this epilogue)";
      std::printf("\n// ---- %s%s\n%s", k.name.c_str(), how, src.c_str());
    }
#else
    throw Error("explain", "--source cuda: this fusor was built without the CUDA backend");
#endif
  }
  if (!a.dot.empty()) {
    write_plan_dot(p, a.dot);
    std::printf("wrote %s", printable(a.dot).c_str());
    std::string svg = a.dot + ".svg";
    if (a.dot.size() > 4 && a.dot.substr(a.dot.size() - 4) == ".dot") svg = a.dot.substr(0, a.dot.size() - 4) + ".svg";
    // Graphviz renders the SVG when installed; arguments go straight to exec (no shell).
    // A name starting with '-' would reach Graphviz as an option: pass it as ./-name.
    std::string dot = "dot", tsvg = "-Tsvg", in = a.dot[0] == '-' ? "./" + a.dot : a.dot, o = "-o" + (svg[0] == '-' ? "./" + svg : svg);
    std::vector<char*> argv{dot.data(), tsvg.data(), in.data(), o.data(), nullptr};
    pid_t pid;
    int status = 0;
    if (posix_spawnp(&pid, "dot", nullptr, nullptr, argv.data(), environ) == 0 && waitpid(pid, &status, 0) == pid &&
        WIFEXITED(status) && WEXITSTATUS(status) == 0)
      std::printf(" and %s", printable(svg).c_str());
    std::printf("\n");
  }
  return 0;
}

std::string best_backend() {
  for (const char* name : {"cuda", "vulkan"}) {
    try {
      auto b = make_backend(name);
      auto d = b->devices();
      // lavapipe is a CPU device: prefer it over the interpreter, it still runs generated kernels.
      if (!d.empty()) return name;
    } catch (const std::exception&) {
    }
  }
  return "cpu";
}

}  // namespace fusor
