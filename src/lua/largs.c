/* What each C function of the binding takes: one table, read by the
 * dispatcher that every registered function goes through (lcall.c's
 * ndL_register), so that an argument past a function's last parameter
 * raises instead of being ignored (`W:add_(dW, -lr)` would otherwise add
 * dW). Params are written as the reference writes them; "..." marks a
 * function that checks its own variable tail (sizes then a dtype). The
 * elementwise ops are not listed: their parameters follow from the core's
 * op table (arity), see ndL_params. */
#include "lnd.h"
#include <string.h>

typedef struct sig {
  const char *name, *params, *hint;
} sig;

static const sig sigs[] = {
    /* construction */
    {"tensor", "data [, dtype]", NULL},
    {"empty", "...", NULL},
    {"zeros", "...", NULL},
    {"ones", "...", NULL},
    {"full", "sizes, value [, dtype]", NULL},
    {"arange", "...", NULL},
    {"linspace", "a, b, n [, dtype]", NULL},
    {"eye", "n [, m] [, dtype]", NULL},
    {"from_string", "bytes, dtype [, sizes]", NULL},
    /* introspection and elements */
    {"size", "t [, dim]", NULL},
    {"stride", "t [, dim]", NULL},
    {"storage_offset", "t", NULL},
    {"dim", "t", NULL},
    {"numel", "t", NULL},
    {"element_size", "t", NULL},
    {"nbytes", "t", NULL},
    {"data_ptr", "t", NULL},
    {"dtype", "t", NULL},
    {"is_contiguous", "t", NULL},
    {"is_readonly", "t", NULL},
    {"same_storage", "a, b", NULL},
    {"may_overlap", "a, b", NULL},
    {"storage", "t", NULL},
    {"get", "...", NULL},
    {"set", "...", NULL},
    {"item", "t", NULL},
    {"totable", "t", NULL},
    {"fill_", "t, value", NULL},
    {"zero_", "t", NULL},
    {"to_string", "t", NULL},
    {"release", "t", NULL},
    /* views */
    {"select", "t, dim, index", NULL},
    {"narrow", "t, dim, start, length", NULL},
    {"transpose", "t, dim1, dim2", NULL},
    {"t", "t", NULL},
    {"permute", "...", NULL},
    {"expand", "...", NULL},
    {"broadcast_to", "...", NULL},
    {"expand_as", "t, other", NULL},
    {"view", "...", NULL},
    {"view_as", "t, other", NULL},
    {"reshape", "...", NULL},
    {"squeeze", "t [, dim]", NULL},
    {"unsqueeze", "t, dim", NULL},
    {"flatten", "t [, first [, last]]", NULL},
    {"unfold", "t, dim, size, step", NULL},
    {"diagonal", "t [, offset [, dim1, dim2]]", NULL},
    {"movedim", "t, src, dst", NULL},
    {"flip", "...", NULL},
    {"as_strided", "t, sizes, strides [, offset]", NULL},
    /* copies */
    {"contiguous", "t", NULL},
    {"clone", "t", NULL},
    {"copy_", "t, src", NULL},
    {"to", "t, dtype", NULL},
    {"float", "t", NULL},
    {"double", "t", NULL},
    {"int", "t", NULL},
    {"long", "t", NULL},
    {"byte", "t", NULL},
    {"char", "t", NULL},
    {"short", "t", NULL},
    {"half", "t", NULL},
    {"bfloat16", "t", NULL},
    {"bool", "t", NULL},
    {"cat", "tensors [, dim]", NULL},
    {"stack", "tensors [, dim]", NULL},
    /* elementwise beyond the op table, and reductions */
    {"clamp", "t, lo, hi [, out]", NULL},
    {"clamp_", "t, lo, hi", NULL},
    {"where", "cond, a, b [, out]", NULL},
    {"lerp", "a, b, weight [, out]", NULL},
    {"lerp_", "t, b, weight", NULL},
    {"addcmul", "t, a, b [, value] [, out]", NULL},
    {"addcmul_", "t, a, b [, value]", NULL},
    {"addcdiv", "t, a, b [, value] [, out]", NULL},
    {"addcdiv_", "t, a, b [, value]", NULL},
    {"isclose", "a, b [, rtol [, atol [, equal_nan]]]", NULL},
    {"nan_to_num", "t [, nan [, posinf [, neginf [, out]]]]", NULL},
    {"nan_to_num_", "t [, nan [, posinf [, neginf]]]", NULL},
    {"sum", "t [, dim [, keepdim]]", NULL},
    {"mean", "t [, dim [, keepdim]]", NULL},
    {"prod", "t [, dim [, keepdim]]", NULL},
    {"all", "t [, dim [, keepdim]]", NULL},
    {"any", "t [, dim [, keepdim]]", NULL},
    {"min", "t [, dim [, keepdim]]", NULL},
    {"max", "t [, dim [, keepdim]]", NULL},
    {"argmin", "t [, dim [, keepdim]]", NULL},
    {"argmax", "t [, dim [, keepdim]]", NULL},
    {"norm", "t [, p [, dim [, keepdim]]]", NULL},
    {"set_num_threads", "n", NULL},
    {"get_num_threads", "", NULL},
    /* matmul */
    {"matmul", "a, b [, out]", NULL},
    {"mm", "a, b [, out]", NULL},
    {"mv", "a, b [, out]", NULL},
    {"dot", "a, b", NULL},
    {"bmm", "a, b [, out]", NULL},
    {"outer", "a, b [, out]", NULL},
    {"addmm", "c, a, b [, beta, alpha] [, out]", NULL},
    {"addmm_", "c, a, b [, beta, alpha]", NULL},
    {"addmv", "c, a, x [, beta, alpha] [, out]", NULL},
    {"addmv_", "c, a, x [, beta, alpha]", NULL},
    {"addr", "c, x, y [, beta, alpha] [, out]", NULL},
    {"addr_", "c, x, y [, beta, alpha]", NULL},
    {"baddbmm", "c, a, b [, beta, alpha] [, out]", NULL},
    {"baddbmm_", "c, a, b [, beta, alpha]", NULL},
    {"addbmm", "c, a, b [, beta, alpha] [, out]", NULL},
    {"addbmm_", "c, a, b [, beta, alpha]", NULL},
    {"matmul_plan", "a, b [, out]", NULL},
    /* contractions */
    {"einsum", "...", NULL},
    {"einsum_plan", "...", NULL},
    {"tensordot", "a, b, dims", NULL},
    /* convolution (lconv.c) */
    {"conv1d", "input, weight [, options]", NULL},
    {"conv2d", "input, weight [, options]", NULL},
    {"conv3d", "input, weight [, options]", NULL},
    {"conv_plan", "input, weight [, options]", NULL},
    {"inner", "a, b", NULL},
    {"kron", "a, b", NULL},
    {"cross", "a, b [, dim]", NULL},
    {"dist", "a, b [, p]", NULL},
    {"normalize", "t [, p [, dim [, eps]]]", NULL},
    /* sorting, scans, statistics */
    {"sort", "t [, dim [, descending]]", NULL},
    {"argsort", "t [, dim [, descending]]", NULL},
    {"topk", "t, k [, dim [, largest [, sorted]]]", NULL},
    {"kthvalue", "t, k [, dim [, keepdim]]", NULL},
    {"median", "t [, dim [, keepdim]]", NULL},
    {"unique", "t [, return_counts]", NULL},
    {"searchsorted", "sorted, values [, right]", NULL},
    {"cumsum", "t, dim", NULL},
    {"cumprod", "t, dim", NULL},
    {"var", "t [, dim [, keepdim [, correction]]]", NULL},
    {"std", "t [, dim [, keepdim [, correction]]]", NULL},
    {"logsumexp", "t, dim [, keepdim]", NULL},
    {"softmax", "t, dim", NULL},
    {"log_softmax", "t, dim", NULL},
    {"count_nonzero", "t [, dim]", NULL},
    {"histc", "t [, bins [, min, max]]", NULL},
    /* padding, counting, encoding */
    {"pad", "t, pads [, mode [, value]]", NULL},
    {"bincount", "t [, weights [, minlength]]", NULL},
    {"one_hot", "index [, num_classes]", NULL},
    /* pooling */
    {"max_pool1d", "t, options", NULL},
    {"max_pool2d", "t, options", NULL},
    {"max_pool3d", "t, options", NULL},
    {"avg_pool1d", "t, options", NULL},
    {"avg_pool2d", "t, options", NULL},
    {"avg_pool3d", "t, options", NULL},
    {"adaptive_avg_pool2d", "t, size", NULL},
    /* filtering and resampling */
    {"convolve", "a, v [, mode]", NULL},
    {"correlate", "a, v [, mode]", NULL},
    {"convolve2d", "a, k [, mode [, boundary [, fill]]]", NULL},
    {"correlate2d", "a, k [, mode [, boundary [, fill]]]", NULL},
    {"interpolate", "t, options [, mode [, align_corners]]", NULL},
    /* indexing with tensors */
    {"index_select", "t, dim, index", NULL},
    {"gather", "t, dim, index", NULL},
    {"take", "t, index", NULL},
    {"scatter_", "t, dim, index, src", NULL},
    {"scatter_add_", "t, dim, index, src", NULL},
    {"index_add_", "t, dim, index, src [, alpha]", NULL},
    {"index_fill_", "t, dim, index, value", NULL},
    {"index_copy_", "t, dim, index, src", NULL},
    {"masked_fill_", "t, mask, value", NULL},
    {"masked_select", "t, mask", NULL},
    {"masked_scatter_", "t, mask, src", NULL},
    {"nonzero", "t", NULL},
    /* random: samplers take sizes then a dtype ("...") */
    {"rand", "...", NULL},
    {"randn", "...", NULL},
    {"randint", "...", NULL},
    {"uniform", "...", NULL},
    {"normal", "...", NULL},
    {"bernoulli", "...", NULL},
    {"randperm", "...", NULL},
    {"multinomial", "probs, n [, replacement]", NULL},
    {"uniform_", "t, lo, hi [, generator]", NULL},
    {"normal_", "t, mean, std [, generator]", NULL},
    {"rand_like", "t [, dtype]", NULL},
    {"randn_like", "t [, dtype]", NULL},
    {"manual_seed", "seed", NULL},
    {"generator", "[seed]", NULL},
    {"default_generator", "", NULL},
    /* io, wrap */
    {"save", "path, t", NULL},
    {"load", "path [, options]", NULL},
    {"clock", "", NULL},
    {"wrap", "ptr, nbytes, dtype, sizes [, strides [, owner [, options]]]", NULL},
    /* functions of the Lua layer (lua/ *.lua, through ext.checked) */
    {"equal", "a, b", NULL},
    {"allclose", "a, b [, rtol [, atol]]", NULL},
    {"split", "t, size_or_sizes [, dim]", NULL},
    {"chunk", "t, chunks [, dim]", NULL},
    {"unbind", "t [, dim]", NULL},
    {"tile", "...", NULL},
    {"roll", "t, shifts [, dims]", NULL},
    {"tril", "t [, k]", NULL},
    {"triu", "t [, k]", NULL},
    {"diag", "t [, k]", NULL},
    {"trace", "t", NULL},
    {"meshgrid", "...", NULL},
    {"hstack", "tensors", NULL},
    {"vstack", "tensors", NULL},
    {"zeros_like", "t [, dtype]", NULL},
    {"ones_like", "t [, dtype]", NULL},
    {"empty_like", "t [, dtype]", NULL},
    {"full_like", "t, value [, dtype]", NULL},
    {"layout", "t", NULL},
    {"cdata", "t", NULL},
    {"use_ffi", "[on]", NULL},
    {"is_tensor", "v", NULL},
    /* nd.image (limage.c registers them under these names) */
    {"image.load", "path [, options]", NULL},
    {"image.save", "path, t [, options]", NULL},
    {"image.decode", "bytes [, options]", NULL},
    {"image.encode", "t, format [, options]", NULL},
    /* nd.safetensors (lsafetensors.c) */
    {"safetensors.load", "path [, options]", NULL},
    {"safetensors.save", "path, tensors [, metadata]", NULL},
    {"safetensors.metadata", "path", NULL},
    {NULL, NULL, NULL}};

static const sig linalg_sigs[] = {
    /* nd.linalg (looked up under ns "linalg": its norm is not t:norm) */
    {"solve", "A, B", NULL},
    {"inv", "A", NULL},
    {"det", "A", NULL},
    {"slogdet", "A", NULL},
    {"cholesky", "A", NULL},
    {"qr", "A", NULL},
    {"svd", "A", NULL},
    {"svdvals", "A", NULL},
    {"eigh", "A", NULL},
    {"eigvalsh", "A", NULL},
    {"lstsq", "A, B", NULL},
    {"pinv", "A", NULL},
    {"matrix_rank", "A", NULL},
    {"matrix_power", "A, n", NULL},
    {"cond", "A", NULL},
    {"norm", "A [, ord]", NULL},
    {"plan", "name, A [, B]", NULL},
    {NULL, NULL, NULL}};

/* Hints for the mistakes a habit from another library makes. */
static const char *hint_of(const char *name) {
  static const char *const scaled[] = {"add_", "sub_", NULL};
  for (int i = 0; scaled[i]; i++)
    if (!strcmp(name, scaled[i]))
      return "to scale, use a:add_(b * alpha) (no alpha argument, unlike "
             "PyTorch)";
  return NULL;
}

/* An elementwise op of the core's table: its parameters from its arity,
 * or NULL when name is none. */
static const char *op_params(const char *name) {
  size_t n = strlen(name);
  int inplace = n > 1 && name[n - 1] == '_';
  char base[40];
  if (n >= sizeof base) return NULL;
  memcpy(base, name, n - (size_t)inplace);
  base[n - (size_t)inplace] = 0;
  for (int op = 0; op < ND_NOPS; op++)
    if (!strcmp(base, nd_op_name(op))) {
      int binary = op < ND_NEG;
      return inplace ? (binary ? "t, other" : "t")
                     : (binary ? "a, b [, out]" : "t [, out]");
    }
  for (int op = 0; op < ND_NMATH; op++)
    if (!strcmp(base, nd_math_name(op))) {
      int binary = op >= ND_ATAN2;
      return inplace ? (binary ? "t, other" : "t")
                     : (binary ? "a, b [, out]" : "t [, out]");
    }
  return NULL;
}

/* How many arguments params names (-1: any number). */
static int count(const char *params) {
  if (strstr(params, "...")) return -1;
  int n = 0, in = 0;
  for (const char *p = params; *p; p++) {
    int word = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
               *p == '_';
    if (word && !in) n++;
    in = word || (in && *p >= '0' && *p <= '9');
  }
  return n;
}

int ndL_params(const char *ns, const char *name, const char **params,
               const char **hint) {
  *hint = NULL;
  *params = NULL;
  if (ns && !strcmp(ns, "generator")) { /* g:rand(...), g:manual_seed(seed) */
    *params = strcmp(name, "manual_seed") ? "g, ..." : "g, seed";
  } else {
    for (const sig *s = ns ? linalg_sigs : sigs; s->name; s++)
      if (!strcmp(s->name, name)) *params = s->params;
    if (!*params && !ns) *params = op_params(name);
    *hint = hint_of(name);
  }
  return *params ? count(*params) : -2;
}
