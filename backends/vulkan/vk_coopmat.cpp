// Cooperative matrices on Vulkan: device query, per-kernel shape choice, NV -> KHR rewrite.
#include "backends/vulkan/vk_coopmat.h"

#define SPV_ENABLE_UTILITY_CODE  // SpvHasResultAndType: which words are the result type / id
#include <spirv/unified1/spirv.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <map>
#include <new>
#include <set>
#include <sstream>

namespace fusor::vk {

namespace {

// VK_KHR_cooperative_matrix, absent from the 1.3.239 headers (Vulkan registry, vk.xml).
constexpr VkStructureType kSTypeFeaturesKHR = static_cast<VkStructureType>(1000506000);
constexpr VkStructureType kSTypePropertiesKHR = static_cast<VkStructureType>(1000506001);
struct CoopmatFeaturesKHR {
  VkStructureType sType;
  void* pNext;
  VkBool32 cooperativeMatrix;
  VkBool32 cooperativeMatrixRobustBufferAccess;
};
struct CoopmatPropertiesKHR {
  VkStructureType sType;
  void* pNext;
  uint32_t MSize, NSize, KSize;
  uint32_t AType, BType, CType, ResultType;  // VkComponentTypeKHR
  VkBool32 saturatingAccumulation;
  uint32_t scope;  // VkScopeKHR
};
using PFN_coopmat_props_khr = VkResult(VKAPI_PTR*)(VkPhysicalDevice, uint32_t*, CoopmatPropertiesKHR*);
// VK_KHR_shader_bfloat16 (Vulkan registry, vk.xml): its features struct and component type.
constexpr VkStructureType kSTypeBf16FeaturesKHR = static_cast<VkStructureType>(1000141000);
struct Bf16FeaturesKHR {
  VkStructureType sType;
  void* pNext;
  VkBool32 shaderBFloat16Type, shaderBFloat16DotProduct, shaderBFloat16CooperativeMatrix;
};
constexpr uint32_t kBF16 = 1000141000u;  // VK_COMPONENT_TYPE_BFLOAT16_KHR
static_assert(sizeof(CoopmatFeaturesKHR) == sizeof(VkPhysicalDeviceCooperativeMatrixFeaturesNV), "same layout as the NV struct");

constexpr uint32_t kF16 = 0, kF32 = 1, kScopeSubgroup = 3;
// A bf16*bf16+f32 subgroup shape the template can take (not saturating, dims in 1..64).
// An f16*f16+f32 subgroup shape gemm_coopmat.glsl can take (a square one through KHR too: its
// B rows are then a specialization constant, FZ_CM_KB_SPEC, so A and B are distinct types).
bool usable_f16_shape(const CoopmatShape& c) {
  return c.scope == kScopeSubgroup && c.a == kF16 && c.b == kF16 && c.c == kF32 && c.result == kF32 && !c.saturating &&
         c.m > 0 && c.n > 0 && c.k > 0 && c.m <= 64 && c.n <= 64 && c.k <= 64;
}

bool usable_bf16_shape(const CoopmatShape& c) {
  return c.scope == kScopeSubgroup && c.a == kBF16 && c.b == kBF16 && c.c == kF32 && c.result == kF32 && !c.saturating &&
         c.m > 0 && c.n > 0 && c.k > 0 && c.m <= 64 && c.n <= 64 && c.k <= 64;
}

// SPIR-V numbers (SPIR-V registry: SPV_NV_cooperative_matrix, SPV_KHR_cooperative_matrix).
constexpr uint32_t kCapNV = 5357, kCapKHR = 6022;
constexpr uint32_t kTypeNV = 5358, kLoadNV = 5359, kStoreNV = 5360, kMulAddNV = 5361, kLengthNV = 5362;
constexpr uint32_t kTypeKHR = 4456, kLoadKHR = 4457, kStoreKHR = 4458, kMulAddKHR = 4459, kLengthKHR = 4460;
constexpr uint32_t kCapBf16Type = 5116, kCapBf16Coopmat = 5118, kOpTypeFloat = 22;  // SPV_KHR_bfloat16
constexpr uint32_t kOpCapability = 17, kOpExtension = 10, kOpTypeInt = 21, kOpConstantTrue = 41, kOpConstantFalse = 42,
                   kOpConstant = 43;

const char* component_name(uint32_t t) {
  static const char* names[] = {"f16", "f32", "f64", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"};
  if (t == 1000141000u) return "bf16";  // VK_COMPONENT_TYPE_BFLOAT16_KHR (VK_KHR_shader_bfloat16)
  return t < 11 ? names[t] : "?";
}


std::vector<uint32_t> string_words(const std::string& s) {
  std::vector<uint32_t> w(s.size() / 4 + 1, 0);  // NUL-terminated, zero-padded
  std::memcpy(w.data(), s.data(), s.size());
  return w;
}

std::string env_mode() {
  const char* e = std::getenv("FUSOR_VK_COOPMAT");
  return e ? e : "";
}

}  // namespace

bool has_extension(VkPhysicalDevice pd, const char* name) {
  uint32_t n = 0;
  if (vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> exts(n);
  if (vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data()) != VK_SUCCESS) return false;
  for (auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

void query_cooperative_matrix(VkInstance instance, PhysicalDeviceInfo& info) {
  VkPhysicalDevice pd = info.handle;
  if (info.api_version < VK_API_VERSION_1_2) return;  // the shaders need the 1.2 memory model feature
  const bool nv = has_extension(pd, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  const bool khr = has_extension(pd, "VK_KHR_cooperative_matrix");
  info.bfloat16_ext = has_extension(pd, "VK_KHR_shader_bfloat16");
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV fnv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  CoopmatFeaturesKHR fkhr{kSTypeFeaturesKHR, nullptr, VK_FALSE, VK_FALSE};
  Bf16FeaturesKHR fbf{kSTypeBf16FeaturesKHR, nullptr, VK_FALSE, VK_FALSE, VK_FALSE};
  f2.pNext = &f12;
  void** tail = &f12.pNext;
  if (nv) *tail = &fnv, tail = &fnv.pNext;
  if (khr) *tail = &fkhr, tail = &fkhr.pNext;
  if (khr && info.bfloat16_ext) *tail = &fbf;
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  // Both or neither: with the model enabled but not its device scope, the Device-scope barriers
  // of every other kernel (memoryBarrierShared() in the GLSL450 model) become invalid.
  info.vulkan_memory_model = f12.vulkanMemoryModel && f12.vulkanMemoryModelDeviceScope;
  // With both extensions KHR's is used: the H200 ran fp16 matmuls faster as KHR modules than as
  // NV ones (twelfth session, same call: fp16 MLP b64 39.7 -> 37.0 us, GPT-2 2L 158.4 -> 152.5 us).
  // FUSOR_VK_COOPMAT_API=nv (measuring) keeps NV's where both are offered.
  const char* api = std::getenv("FUSOR_VK_COOPMAT_API");
  const bool khr_ok = khr && fkhr.cooperativeMatrix, want_nv = api && std::strcmp(api, "nv") == 0;
  info.coopmat_nv = false;
  info.coopmat_khr = false;
  info.coopmat_shapes.clear();
  info.coopmat_khr_also.clear();
  std::vector<CoopmatShape> khr_shapes, nv_shapes;
  if (khr_ok) {
    auto get = reinterpret_cast<PFN_coopmat_props_khr>(
        vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
    uint32_t n = 0;
    if (get && get(pd, &n, nullptr) == VK_SUCCESS && n > 0) {
      std::vector<CoopmatPropertiesKHR> props(n, CoopmatPropertiesKHR{kSTypePropertiesKHR, nullptr, 0, 0, 0, 0, 0, 0, 0, 0, 0});
      if (get(pd, &n, props.data()) == VK_SUCCESS)
        for (uint32_t i = 0; i < n; ++i) {
          const auto& p = props[i];
          khr_shapes.push_back({p.MSize, p.NSize, p.KSize, p.AType, p.BType, p.CType, p.ResultType, p.scope, p.saturatingAccumulation != VK_FALSE});
        }
    }
  }
  // NV's list only where KHR's has no fp16 shape fusor can use, or NV is asked for.
  const bool khr_f16 = std::any_of(khr_shapes.begin(), khr_shapes.end(), [](const CoopmatShape& c) { return usable_f16_shape(c); });
  if (nv && fnv.cooperativeMatrix && (!khr_f16 || want_nv)) {
    auto get = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
        vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
    uint32_t n = 0;
    if (get && get(pd, &n, nullptr) == VK_SUCCESS && n > 0) {
      std::vector<VkCooperativeMatrixPropertiesNV> props(n, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
      if (get(pd, &n, props.data()) == VK_SUCCESS)
        for (uint32_t i = 0; i < n; ++i) {
          const auto& p = props[i];
          nv_shapes.push_back({p.MSize, p.NSize, p.KSize, static_cast<uint32_t>(p.AType), static_cast<uint32_t>(p.BType),
                               static_cast<uint32_t>(p.CType), static_cast<uint32_t>(p.DType), static_cast<uint32_t>(p.scope), false});
        }
    }
  }
  // With NV's in use, KHR's list may still hold other types (bf16): kept for `fusor devices` and
  // bf16 matmuls (coopmat_khr_also).
  if (!nv_shapes.empty()) {
    info.coopmat_nv = true;
    info.coopmat_shapes = std::move(nv_shapes);
    info.coopmat_khr = !khr_shapes.empty();
    info.coopmat_khr_also = std::move(khr_shapes);
  } else if (!khr_shapes.empty()) {
    info.coopmat_khr = true;
    info.coopmat_shapes = std::move(khr_shapes);
  }
  info.coopmat_bf16 = false;
  if (khr && fkhr.cooperativeMatrix && info.bfloat16_ext && fbf.shaderBFloat16Type && fbf.shaderBFloat16CooperativeMatrix &&
      info.vulkan_memory_model && info.shader_float16 && info.storage_16bit && info.subgroup_size > 0 && info.subgroup_size <= 128)
    for (const CoopmatShape& c : info.coopmat_nv ? info.coopmat_khr_also : info.coopmat_shapes)
      if (usable_bf16_shape(c)) info.coopmat_bf16 = true;
}

namespace {
void list_shapes(std::ostringstream& s, const std::vector<CoopmatShape>& shapes) {
  bool first = true;
  for (const CoopmatShape& c : shapes) {
    if (c.scope != kScopeSubgroup) continue;
    s << (first ? "" : ",") << c.m << "x" << c.n << "x" << c.k << " " << component_name(c.a) << "*" << component_name(c.b) << "+"
      << component_name(c.c) << (c.saturating ? "(sat)" : "");
    first = false;
  }
  if (first) s << "no-subgroup-shapes";
}
}  // namespace

std::string coopmat_summary(const PhysicalDeviceInfo& info) {
  if (!info.coopmat_nv && !info.coopmat_khr) return "coopmat=none";
  std::ostringstream s;
  s << "coopmat=" << (info.coopmat_nv ? "nv:" : "khr:");
  list_shapes(s, info.coopmat_shapes);
  if (info.coopmat_nv && !info.coopmat_khr_also.empty()) {
    s << " coopmat_khr=";
    list_shapes(s, info.coopmat_khr_also);
  }
  if (info.bfloat16_ext) s << " VK_KHR_shader_bfloat16";
  return s.str();
}

const char* coopmat_extension(const PhysicalDeviceInfo& info) {
  if (info.coopmat_nv) return VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME;
  if (info.coopmat_khr) return "VK_KHR_cooperative_matrix";
  return nullptr;
}

void* chain_coopmat_features(const PhysicalDeviceInfo& info, void* storage, void* next) {
  if (!info.coopmat_nv && !info.coopmat_khr) return next;
  // The NV and KHR feature structs have the same layout; only sType differs.
  return new (storage) CoopmatFeaturesKHR{info.coopmat_nv ? VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV : kSTypeFeaturesKHR,
                                         next, VK_TRUE, VK_FALSE};
}

void* chain_bf16_coopmat_features(const PhysicalDeviceInfo& info, void* storage, void* next, std::vector<const char*>& extensions) {
  if (!info.coopmat_bf16) return next;
  auto* bf = new (storage) Bf16FeaturesKHR{kSTypeBf16FeaturesKHR, next, VK_TRUE, VK_FALSE, VK_TRUE};
  extensions.push_back("VK_KHR_shader_bfloat16");
  if (!info.coopmat_nv) return bf;  // KHR is already the cooperative-matrix extension enabled
  extensions.push_back("VK_KHR_cooperative_matrix");
  return new (static_cast<unsigned char*>(storage) + 64) CoopmatFeaturesKHR{kSTypeFeaturesKHR, bf, VK_TRUE, VK_FALSE};
}

std::optional<CoopmatShape> coopmat_bf16_shape(const PhysicalDeviceInfo& info) {
  if (!info.coopmat_bf16) return std::nullopt;
  std::optional<CoopmatShape> best;
  for (const CoopmatShape& c : info.coopmat_nv ? info.coopmat_khr_also : info.coopmat_shapes)
    if (usable_bf16_shape(c) && (!best || c.n < best->n))
      best = c;
  return best;
}

std::optional<CoopmatShape> coopmat_shape_for(const PhysicalDeviceInfo& info, std::string* why) {
  auto no = [&](const std::string& r) -> std::optional<CoopmatShape> {
    if (why) *why = r;
    return std::nullopt;
  };
  if (!info.coopmat_nv && !info.coopmat_khr) return no("neither VK_NV_cooperative_matrix nor VK_KHR_cooperative_matrix is offered");
  if (!info.shader_float16 || !info.storage_16bit) return no("no shaderFloat16 / storageBuffer16BitAccess");
  if (!info.vulkan_memory_model) return no("no vulkanMemoryModel (the cooperative-matrix shaders need it)");
  if (info.subgroup_size == 0 || info.subgroup_size > 128) return no("unusable subgroup size " + std::to_string(info.subgroup_size));
  std::optional<CoopmatShape> best;
  // FUSOR_VK_COOPMAT_SHAPE=MxNxK (measuring): that listed shape instead of the preferred one.
  unsigned want[3] = {16, 8, 16};
  if (const char* e = std::getenv("FUSOR_VK_COOPMAT_SHAPE")) std::sscanf(e, "%ux%ux%u", &want[0], &want[1], &want[2]);
  for (const CoopmatShape& c : info.coopmat_shapes) {
    if (!usable_f16_shape(c)) continue;
    const bool preferred = c.m == want[0] && c.n == want[1] && c.k == want[2];
    if (!best || preferred) best = c;
    if (preferred) break;
  }
  if (!best) return no("the device lists no subgroup-scope f16*f16+f32 shape fusor can use (" + coopmat_summary(info) + ")");
  return best;
}

std::optional<CoopmatShape> choose_coopmat(const KernelSpec& k, const Plan& p, const PhysicalDeviceInfo& info) {
  if (!k.matmul) return std::nullopt;
  const std::string mode = env_mode();
  if (mode == "0") return std::nullopt;
  const MatMulDesc& m = *k.matmul;
  const auto dtype = [&](int b) { return b >= 0 && b < static_cast<int>(p.buffers.size()) ? p.buffers[b].dtype : DType::f32; };
  // bf16: the fp16 module with its A / B matrix types retyped to bf16 (coopmat_nv_to_khr).
  const bool bf = dtype(m.a_buffer) == DType::bf16 && dtype(m.b_buffer) == DType::bf16;
  if (!(bf || (dtype(m.a_buffer) == DType::f16 && dtype(m.b_buffer) == DType::f16)) || m.m <= 8 || m.n <= 0 || m.k <= 0)
    return std::nullopt;
  if (mode == "emulate" && coopmat_emulated(info))
    return bf ? CoopmatShape{16, 16, 16, kBF16, kBF16, kF32, kF32, kScopeSubgroup, false}
              : CoopmatShape{16, 8, 16, kF16, kF16, kF32, kF32, kScopeSubgroup, false};
  if (bf) {
    std::optional<CoopmatShape> s = coopmat_bf16_shape(info);
    if (!s && mode == "force")
      throw Error("vulkan", "kernel '" + k.name + "': FUSOR_VK_COOPMAT=force but device '" + info.name +
                                "' lists no bf16*bf16+f32 cooperative-matrix shape with VK_KHR_shader_bfloat16");
    return s;
  }
  std::string why;
  std::optional<CoopmatShape> s = coopmat_shape_for(info, &why);
  if (!s && mode == "force")
    throw Error("vulkan", "kernel '" + k.name + "': FUSOR_VK_COOPMAT=force but device '" + info.name +
                              "' cannot run cooperative matrices: " + why);
  return s;
}

namespace {
// Set once a device was opened with the Vulkan memory model for the emulation (vk_device.cpp):
// a device opened earlier in the process without it must not get the emulated modules.
std::atomic<bool> g_emulation_device{false};
}  // namespace

// Declared where they are used (vk_device.cpp), not in vk_coopmat.h: test-hook plumbing only.
bool coopmat_emulation_requested(const PhysicalDeviceInfo& info) {
  return env_mode() == "emulate" && !info.coopmat_nv && !info.coopmat_khr && info.vulkan_memory_model && info.shader_float16 &&
         info.storage_16bit && info.subgroup_size > 0;
}
void coopmat_note_emulation_device() { g_emulation_device = true; }

bool coopmat_emulated(const PhysicalDeviceInfo& info) { return g_emulation_device && coopmat_emulation_requested(info); }

std::vector<uint32_t> coopmat_nv_to_khr(const std::vector<uint32_t>& nv, bool bf16) {
  auto fail = [](const std::string& m) { return Error("vulkan", "coopmat_nv_to_khr: " + m); };
  if (nv.size() < 5 || nv[0] != 0x07230203u) throw fail("not a SPIR-V module");
  // Pass 1: every instruction's position; value -> type; matrix types; bool constants.
  struct Inst {
    size_t pos;
    uint32_t op, n;
  };
  std::vector<Inst> insts;
  std::map<uint32_t, uint32_t> type_of;       // result id -> result type id
  std::map<uint32_t, uint32_t> use_of;        // matrix type id -> Use
  std::map<uint32_t, const uint32_t*> defs;   // id -> its defining instruction
  std::set<uint32_t> matrix_types, trues, falses;
  for (size_t pos = 5; pos < nv.size();) {
    const uint32_t n = nv[pos] >> 16, op = nv[pos] & 0xffff;
    if (n == 0 || pos + n > nv.size()) throw fail("truncated instruction at word " + std::to_string(pos));
    insts.push_back({pos, op, n});
    bool has_result = false, has_type = false;
    SpvHasResultAndType(static_cast<SpvOp>(op), &has_result, &has_type);
    if (has_result) {
      const uint32_t rid = nv[pos + (has_type ? 2 : 1)];
      defs[rid] = &nv[pos];
      if (has_type) type_of[rid] = nv[pos + 1];
    }
    if (op == kTypeNV) {
      if (n != 6) throw fail("OpTypeCooperativeMatrixNV with " + std::to_string(n) + " words");
      matrix_types.insert(nv[pos + 1]);
    }
    if (op == kOpConstantTrue) trues.insert(nv[pos + 2]);
    if (op == kOpConstantFalse) falses.insert(nv[pos + 2]);
    pos += n;
  }
  if (matrix_types.empty()) return nv;
  auto set_use = [&](uint32_t type, uint32_t use) {
    auto [it, fresh] = use_of.try_emplace(type, use);
    if (!fresh && it->second != use)
      throw fail("matrix type %" + std::to_string(type) + " is used as more than one of A, B and the accumulator");
  };
  for (const Inst& i : insts) {
    if (i.op != kMulAddNV) continue;
    const uint32_t* w = &nv[i.pos];
    if (i.n != 6) throw fail("OpCooperativeMatrixMulAddNV with " + std::to_string(i.n) + " words");
    set_use(type_of[w[3]], 0);
    set_use(type_of[w[4]], 1);
    set_use(type_of[w[5]], 2);
    set_use(w[1], 2);
  }
  for (uint32_t t : matrix_types)
    if (!use_of.count(t)) throw fail("matrix type %" + std::to_string(t) + " is never an operand of OpCooperativeMatrixMulAddNV");

  // The 32-bit integer type of the first matrix type's Rows constant types the new constants
  // (it is declared before that matrix type, where the constants go).
  const Inst* first_type = nullptr;
  for (const Inst& i : insts)
    if (i.op == kTypeNV) {
      first_type = &i;
      break;
    }
  const auto rows_def = defs.find(nv[first_type->pos + 4]);
  if (rows_def == defs.end()) throw fail("matrix rows id is not defined");
  const uint32_t int_type = rows_def->second[1];
  const auto int_def = defs.find(int_type);
  if (int_def == defs.end() || (int_def->second[0] & 0xffff) != kOpTypeInt || int_def->second[2] != 32)
    throw fail("matrix rows are not a 32-bit integer constant");
  uint32_t bound = nv[3];
  uint32_t value_id[3];
  std::vector<uint32_t> consts;
  for (uint32_t v = 0; v < 3; ++v) {
    value_id[v] = bound++;
    consts.insert(consts.end(), {(4u << 16) | kOpConstant, int_type, value_id[v], v});
  }
  const uint32_t bf16_type = bf16 ? bound++ : 0;  // OpTypeFloat 16 BFloat16KHR (encoding 0)
  if (bf16) consts.insert(consts.end(), {(4u << 16) | kOpTypeFloat, bf16_type, 16u, 0u});
  auto layout = [&](uint32_t col_major) {
    if (trues.count(col_major)) return value_id[1];   // ColumnMajorKHR
    if (falses.count(col_major)) return value_id[0];  // RowMajorKHR
    throw fail("the column-major operand %" + std::to_string(col_major) + " is not OpConstantTrue/False");
  };

  // Pass 2: copy, rewriting as we go.
  std::vector<uint32_t> out(nv.begin(), nv.begin() + 5);
  out.reserve(nv.size() + consts.size() + 64);
  for (const Inst& i : insts) {
    const uint32_t* w = &nv[i.pos];
    if (&i == first_type) out.insert(out.end(), consts.begin(), consts.end());
    switch (i.op) {
      case kOpCapability:
        out.insert(out.end(), w, w + i.n);
        if (i.n == 2 && w[1] == kCapNV) {
          out.back() = kCapKHR;
          if (bf16) out.insert(out.end(), {(2u << 16) | kOpCapability, kCapBf16Type, (2u << 16) | kOpCapability, kCapBf16Coopmat});
        }
        break;
      case kOpExtension: {
        const std::string name(reinterpret_cast<const char*>(w + 1), strnlen(reinterpret_cast<const char*>(w + 1), (i.n - 1) * 4));
        if (name == "SPV_NV_cooperative_matrix") {
          for (const char* ext : {"SPV_KHR_cooperative_matrix", "SPV_KHR_bfloat16"}) {
            if (!bf16 && std::strcmp(ext, "SPV_KHR_bfloat16") == 0) continue;
            std::vector<uint32_t> lit = string_words(ext);
            out.push_back(((1u + static_cast<uint32_t>(lit.size())) << 16) | kOpExtension);
            out.insert(out.end(), lit.begin(), lit.end());
          }
        } else {
          out.insert(out.end(), w, w + i.n);
        }
        break;
      }
      case kTypeNV: {  // result, component, scope, rows, cols -> + use
        const uint32_t use = use_of.at(w[1]);
        out.insert(out.end(), {(7u << 16) | kTypeKHR, w[1], bf16 && use < 2 ? bf16_type : w[2], w[3], w[4], w[5], value_id[use]});
        break;
      }
      case kLoadNV: {  // type, result, pointer, stride, colMajor [, memory operands]
        if (i.n < 6) throw fail("short OpCooperativeMatrixLoadNV");
        out.insert(out.end(), {(i.n << 16) | kLoadKHR, w[1], w[2], w[3], layout(w[5]), w[4]});
        out.insert(out.end(), w + 6, w + i.n);
        break;
      }
      case kStoreNV: {  // pointer, object, stride, colMajor [, memory operands]
        if (i.n < 5) throw fail("short OpCooperativeMatrixStoreNV");
        out.insert(out.end(), {(i.n << 16) | kStoreKHR, w[1], w[2], layout(w[4]), w[3]});
        out.insert(out.end(), w + 5, w + i.n);
        break;
      }
      case kMulAddNV:
        out.insert(out.end(), w, w + i.n);
        out[out.size() - i.n] = (i.n << 16) | kMulAddKHR;
        break;
      case kLengthNV:
        out.insert(out.end(), w, w + i.n);
        out[out.size() - i.n] = (i.n << 16) | kLengthKHR;
        break;
      default: out.insert(out.end(), w, w + i.n);
    }
  }
  out[3] = bound;
  return out;
}

}  // namespace fusor::vk
