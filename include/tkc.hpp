// tkc.hpp — a header-only C++17 wrapper over the C tensor API (tkc.h). Nothing here adds behaviour:
// every method is one call of the C function of the same name, plus ownership and error checks.
//
//   tkc::Context ctx;                                        // $TKC_DEVICE or the best device here
//   tkc::Tensor a = ctx.tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
//   tkc::Tensor y = (a.matmul(a.transpose()) * 0.5f + 1).softmax(-1);   // lazy: nothing runs yet
//   std::vector<float> out = y.to_vector<float>();           // schedules, compiles, runs
//
// Errors: exceptions. Every wrapper checks the C call's NULL / tkc_status result and throws
// tkc::Error (a std::runtime_error) whose what() is tkc_last_error()'s message and whose status()
// is the C status (TKC_ESHAPE, TKC_EDTYPE, ...); the thread's C error is cleared once it has been
// turned into an exception. Checks the C API cannot make itself (an empty tkc::Tensor, a data
// vector that does not fit the shape, an array argument of the wrong length, to_vector<T>() / item<T>()
// with a T that is not the tensor's dtype) throw tkc::Error too, with TKC_EINVAL, TKC_ESHAPE or
// TKC_EDTYPE. Destructors never throw (the C destructors cannot fail). std::bad_alloc may escape
// from any call that allocates, as from the standard library.
//
// Ownership:
//  - tkc::Context is move-only. It owns the tkc_ctx through a shared state that every tensor made
//    from it also holds, so the tkc_ctx is freed (tkc_ctx_free) only when the Context object and
//    all its tensors are gone. Tensors therefore stay usable after their Context is moved from or
//    destroyed: there is no "the Context must outlive its tensors" rule to follow.
//  - tkc::Tensor is a reference-counted handle (like a shared_ptr): copying a Tensor shares the one
//    tkc_tensor handle, and the last copy to go calls tkc_tensor_free. Tensors are immutable lazy
//    values (only copy_in and assign change data, and that is seen by every graph that reads that
//    buffer, as in C), so sharing is the natural semantics; `a += b` rebinds a to a new tensor and
//    leaves other copies of a alone. A moved-from or default-constructed Tensor is empty: defined() is false and
//    every operation on it throws tkc::Error(TKC_EINVAL).
//  - Every op returns a new Tensor, and the temporaries of an expression free their handles at the
//    end of the full expression, so the C API's scopes (tkc_scope_begin / tkc_scope_end / tkc_keep)
//    are not needed and must not be used on a ctx that has tkc::Tensor objects (a scope end would
//    free handles the wrapper still owns). The wrapper does not expose them.
//  - get() returns the raw handle for calling C functions the wrapper lacks; it stays owned by
//    the Tensor. Context::adopt(t) takes ownership of a handle made by such a C call.
//  - Threads: as in C, a ctx and all of its tensors (including the destruction of Tensor copies)
//    are used by one thread at a time; use one Context per thread.
//
// Operators: + - * / % (true division and the C remainder), & | ^ (bitwise; logical for bool),
// unary - (negation; logical not for bool, as tkc_neg) and < <= > >= == != work elementwise on
// tensors and on a tensor with a scalar on either side, broadcasting as NumPy; comparisons give
// bool tensors. Because == returns a Tensor (as in NumPy / torch), Tensor has no conversion to
// bool: test for an empty handle with defined(). += -= *= /= rebind the left side. A scalar
// becomes a 0-d tensor (tkc_scalar) of the tensor's dtype, except where that would lose the scalar's
// kind, following tinygrad's promotion: a floating-point scalar with an int or bool tensor becomes
// float32, an integer scalar with a bool tensor becomes int32 (so int_tensor * 0.5 is float32 and
// not int_tensor * 0). Scalars pass through double, as the C API takes them (int64 values beyond
// 2^53 round). There is no operator for matrix products (C++ has no @ and * stays elementwise):
// use a.matmul(b) or tkc::matmul(a, b).
//
// Training (tkc.h "gradients", "optimizers"): w.requires_grad(true); loss.backward(); w.grad() (an
// empty Tensor, defined() false, when w has no gradient: grad() never throws for that);
// w.zero_grad(); x.detach(); w.assign(value) (in place); tkc::gradient(y, {x1, x2}) (functional);
// tkc::realize_all(a, b, ...) (one schedule); tkc::SGD / tkc::Adam / tkc::AdamW (move-only RAII
// owners of a tkc_optim, keeping their ctx alive) with step(), zero_grad(), set_lr(). A lazy loss
// realized after step() reads the updated parameters: realize it before (loss.realize().backward()).
//
// Naming: methods have the C names without the tkc_ prefix; bitwise and / or / xor (C++ keywords)
// are bitwise_and / bitwise_or / bitwise_xor; tkc_scaled_dot_product_attention is the method
// attention() and the free function tkc::scaled_dot_product_attention. Axes are std::vector<int>
// ({} = all axes), shapes and per-axis pairs std::vector<int64_t>; both take brace lists:
// a.sum({1}, true), a.reshape({2, -1}), a.pad({0, 0, 1, 1}). An optional tensor argument (a bias, a
// weight, a mask) is an empty Tensor to leave it out: x.conv2d(w, {}, 1, 1). Optional int arrays
// (stride, pad, dilation) are {} for the C default (NULL).
#ifndef TKC_HPP
#define TKC_HPP

#if __cplusplus < 201703L && !(defined(_MSVC_LANG) && _MSVC_LANG >= 201703L)
#error "tkc.hpp needs C++17"
#endif

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tkc.h"

namespace tkc {

// ---------------------------------------------------------------- errors

class Error : public std::runtime_error {
 public:
  Error(tkc_status status, const std::string &message) : std::runtime_error(message), status_(status) {}
  tkc_status status() const noexcept { return status_; }
  // "TKC_ESHAPE"-like description of status() (tkc_status_str: static, never NULL)
  const char *status_str() const noexcept { return tkc_status_str(status_); }

 private:
  tkc_status status_;
};

class Tensor;
class Context;
class Jit;
class Optimizer;

namespace detail {

// Turns the thread's C error into a tkc::Error. `status` is what the call returned (TKC_OK for a
// NULL pointer result: then the thread's last status is used).
[[noreturn]] inline void throw_error(tkc_status status, const char *fn) {
  if (status == TKC_OK) status = tkc_last_status();
  std::string msg = tkc_last_error();
  if (status == TKC_OK) {  // should not happen: a failing C call without a reason
    status = TKC_EINTERNAL;
    msg.clear();
  }
  if (msg.empty()) msg = std::string(fn) + " failed (" + tkc_status_str(status) + ")";
  tkc_clear_error();
  throw Error(status, msg);
}

inline void check(tkc_status status, const char *fn) {
  if (status != TKC_OK) throw_error(status, fn);
}

[[noreturn]] inline void fail(tkc_status status, const std::string &msg) { throw Error(status, msg); }

inline const char *dtype_name(tkc_dtype dt) noexcept {
  static const char *const names[] = {"bool",   "int8",   "uint8",  "int16",   "uint16",   "int32",   "uint32",
                                      "int64",  "uint64", "float16", "bfloat16", "float32", "float64", "void"};
  return static_cast<unsigned>(dt) <= static_cast<unsigned>(TKC_VOID) ? names[dt] : "(invalid dtype)";
}

// The tkc dtype of a C++ element type: bool, the fixed-width integers (any integer type of 1, 2, 4
// or 8 bytes), float and double. float16 / bfloat16 have no C++ type: use cast() or the raw calls.
template <class T>
constexpr tkc_dtype dtype_for() noexcept {
  static_assert(std::is_arithmetic<T>::value, "tkc: element types are bool, integers, float and double");
  if constexpr (std::is_same<T, bool>::value) {
    return TKC_BOOL;
  } else if constexpr (std::is_floating_point<T>::value) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "tkc: long double has no tkc dtype");
    return sizeof(T) == 4 ? TKC_FLOAT32 : TKC_FLOAT64;
  } else {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "tkc: no tkc dtype of this size");
    if constexpr (std::is_signed<T>::value)
      return sizeof(T) == 1 ? TKC_INT8 : sizeof(T) == 2 ? TKC_INT16 : sizeof(T) == 4 ? TKC_INT32 : TKC_INT64;
    else
      return sizeof(T) == 1 ? TKC_UINT8 : sizeof(T) == 2 ? TKC_UINT16 : sizeof(T) == 4 ? TKC_UINT32 : TKC_UINT64;
  }
}

inline bool is_float(tkc_dtype dt) noexcept {
  return dt == TKC_FLOAT16 || dt == TKC_BFLOAT16 || dt == TKC_FLOAT32 || dt == TKC_FLOAT64 || dt == TKC_FLOAT8_E4M3FN ||
         dt == TKC_FLOAT8_E5M2;
}

template <class S>
using if_scalar = std::enable_if_t<std::is_arithmetic<S>::value, int>;

// The shared owner of a tkc_ctx (see "Ownership" at the top).
struct CtxState {
  tkc_ctx *ctx;
  std::function<void(const tkc_progress &)> progress;
  explicit CtxState(tkc_ctx *c) noexcept : ctx(c) {}
  CtxState(const CtxState &) = delete;
  CtxState &operator=(const CtxState &) = delete;
  ~CtxState() { tkc_ctx_free(ctx); }
};

// One tkc_tensor handle and the ctx it belongs to; the handle is freed before the ctx reference
// (the destructor body runs before the members are destroyed).
struct Handle {
  std::shared_ptr<CtxState> ctx;
  tkc_tensor *t;
  Handle(std::shared_ptr<CtxState> c, tkc_tensor *h) noexcept : ctx(std::move(c)), t(h) {}
  Handle(const Handle &) = delete;
  Handle &operator=(const Handle &) = delete;
  ~Handle() { tkc_tensor_free(t); }
};

inline std::string shape_str(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); i++) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

inline int ndim_of(size_t n, const char *fn) {
  if (n > static_cast<size_t>(INT_MAX)) fail(TKC_ESHAPE, std::string(fn) + ": too many dims");
  return static_cast<int>(n);
}

// nullptr for {} (the C default), else the array after checking it has `want` entries
template <class T>
const T *opt_array(const std::vector<T> &v, size_t want, const char *fn, const char *what) {
  if (v.empty()) return nullptr;
  if (v.size() != want)
    fail(TKC_EINVAL, std::string(fn) + ": " + what + " needs " + std::to_string(want) + " values, got " + std::to_string(v.size()));
  return v.data();
}

}  // namespace detail

// ---------------------------------------------------------------- tensors

class Tensor {
 public:
  Tensor() noexcept = default;  // empty: defined() is false
  Tensor(const Tensor &) = default;
  Tensor(Tensor &&) noexcept = default;
  Tensor &operator=(const Tensor &) = default;
  Tensor &operator=(Tensor &&) noexcept = default;
  ~Tensor() = default;

  bool defined() const noexcept { return h_ != nullptr; }
  // The raw handle (NULL when empty); the Tensor keeps owning it.
  tkc_tensor *get() const noexcept { return h_ ? h_->t : nullptr; }
  // The raw ctx (NULL when empty); alive as long as this Tensor is.
  tkc_ctx *ctx() const noexcept { return h_ ? h_->ctx->ctx : nullptr; }
  // How many Tensor objects share this handle (0 when empty).
  long use_count() const noexcept { return h_.use_count(); }
  std::string device() const { return tkc_ctx_device(h()->ctx->ctx); }

  // ------------------------------------------------------------ properties
  int ndim() const { return tkc_ndim(raw()); }
  // A variable-length dim is its token (tkc::dim_is_var; Context::dim_value gives its value).
  int64_t dim(int axis) const {
    int64_t d = tkc_dim(raw(), axis);
    if (d < 0 && !tkc_dim_is_var(d)) detail::throw_error(TKC_OK, "tkc_dim");
    return d;
  }
  std::vector<int64_t> shape() const {
    tkc_tensor *t = raw();
    std::vector<int64_t> s(static_cast<size_t>(tkc_ndim(t)));
    for (size_t i = 0; i < s.size(); i++) s[i] = tkc_dim(t, static_cast<int>(i));
    return s;
  }
  // At the variables' bound values (throws TKC_EINVAL naming an unbound one).
  int64_t numel() const {
    int64_t n = tkc_numel(raw());
    if (n < 0) detail::throw_error(TKC_OK, "tkc_numel");
    return n;
  }
  tkc_dtype dtype() const { return tkc_dtype_of(raw()); }

  // ------------------------------------------------------------ running and data
  const Tensor &realize() const {
    detail::check(tkc_realize(raw()), "tkc_realize");
    return *this;
  }
  const Tensor &realize(const std::vector<tkc_opt> &opts) const {
    detail::check(tkc_realize_opts(raw(), opts.data(), detail::ndim_of(opts.size(), "tkc_realize_opts")), "tkc_realize_opts");
    return *this;
  }
  // The elements, row-major; T must be the tensor's dtype (detail::dtype_for), else TKC_EDTYPE.
  template <class T>
  std::vector<T> to_vector() const {
    check_dtype<T>("to_vector");
    const size_t n = static_cast<size_t>(numel());
    if constexpr (std::is_same<T, bool>::value) {
      std::vector<unsigned char> bytes(n);
      copy_out(bytes.data(), n);
      std::vector<bool> out(n);
      for (size_t i = 0; i < n; i++) out[i] = bytes[i] != 0;
      return out;
    } else {
      std::vector<T> out(n);
      copy_out(out.data(), n * sizeof(T));
      return out;
    }
  }
  // The value of a one-element tensor (TKC_ESHAPE otherwise); T must be the tensor's dtype.
  template <class T>
  T item() const {
    check_dtype<T>("item");
    if constexpr (std::is_same<T, bool>::value) {
      unsigned char b = 0;
      detail::check(tkc_item_bytes(raw(), &b, 1), "tkc_item_bytes");
      return b != 0;
    } else {
      T v{};
      detail::check(tkc_item_bytes(raw(), &v, sizeof v), "tkc_item_bytes");
      return v;
    }
  }
  // The value of a one-element tensor of any dtype, converted to double (tkc_item).
  double item() const {
    double v = 0;
    detail::check(tkc_item(raw(), &v), "tkc_item");
    return v;
  }
  // Raw copies (nbytes = numel * itemsize): for float16 / bfloat16 data.
  void copy_out(void *dst, size_t nbytes) const { detail::check(tkc_copy_out(raw(), dst, nbytes), "tkc_copy_out"); }
  void copy_in(const void *src, size_t nbytes) const { detail::check(tkc_copy_in(raw(), src, nbytes), "tkc_copy_in"); }
  // New data for a realized tensor (see tkc_copy_in): T must be the dtype and data.size() numel.
  template <class T>
  void copy_in(const std::vector<T> &data) const {
    check_dtype<T>("copy_in");
    if (static_cast<int64_t>(data.size()) != numel())
      detail::fail(TKC_ESHAPE, "copy_in: " + std::to_string(data.size()) + " values for " + std::to_string(numel()) + " elements");
    if constexpr (std::is_same<T, bool>::value) {
      std::vector<unsigned char> bytes(data.begin(), data.end());
      copy_in(bytes.data(), bytes.size());
    } else {
      copy_in(data.data(), data.size() * sizeof(T));
    }
  }
  int kernel_count() const {
    int n = tkc_kernel_count(raw());
    if (n < 0) detail::throw_error(TKC_OK, "tkc_kernel_count");
    return n;
  }
  std::string kernels_source(const std::string &renderer = "C") const {
    std::unique_ptr<char, void (*)(void *)> src(tkc_kernels_source(raw(), renderer.c_str()), tkc_free);
    if (!src) detail::throw_error(TKC_OK, "tkc_kernels_source");
    return std::string(src.get());
  }

  // A 0-d tensor of this tensor's ctx holding s, with the dtype the operators use (see the top).
  template <class S, detail::if_scalar<S> = 0>
  Tensor scalar_like(S s) const {
    tkc_dtype dt = dtype();
    if (std::is_floating_point<S>::value && !detail::is_float(dt)) dt = TKC_FLOAT32;
    else if (std::is_integral<S>::value && !std::is_same<S, bool>::value && dt == TKC_BOOL) dt = TKC_INT32;
    return wrap(tkc_scalar(h()->ctx->ctx, dt, static_cast<double>(s)), "tkc_scalar");
  }

  // ------------------------------------------------------------ elementwise, binary
  Tensor add(const Tensor &b) const { return bin(tkc_add, b, "tkc_add"); }
  Tensor sub(const Tensor &b) const { return bin(tkc_sub, b, "tkc_sub"); }
  Tensor mul(const Tensor &b) const { return bin(tkc_mul, b, "tkc_mul"); }
  Tensor div(const Tensor &b) const { return bin(tkc_div, b, "tkc_div"); }
  Tensor idiv(const Tensor &b) const { return bin(tkc_idiv, b, "tkc_idiv"); }
  Tensor mod(const Tensor &b) const { return bin(tkc_mod, b, "tkc_mod"); }
  Tensor maximum(const Tensor &b) const { return bin(tkc_maximum, b, "tkc_maximum"); }
  Tensor minimum(const Tensor &b) const { return bin(tkc_minimum, b, "tkc_minimum"); }
  Tensor pow(const Tensor &b) const { return bin(tkc_pow, b, "tkc_pow"); }
  Tensor lt(const Tensor &b) const { return bin(tkc_lt, b, "tkc_lt"); }
  Tensor le(const Tensor &b) const { return bin(tkc_le, b, "tkc_le"); }
  Tensor gt(const Tensor &b) const { return bin(tkc_gt, b, "tkc_gt"); }
  Tensor ge(const Tensor &b) const { return bin(tkc_ge, b, "tkc_ge"); }
  Tensor eq(const Tensor &b) const { return bin(tkc_eq, b, "tkc_eq"); }
  Tensor ne(const Tensor &b) const { return bin(tkc_ne, b, "tkc_ne"); }
  Tensor bitwise_and(const Tensor &b) const { return bin(tkc_and, b, "tkc_and"); }
  Tensor bitwise_or(const Tensor &b) const { return bin(tkc_or, b, "tkc_or"); }
  Tensor bitwise_xor(const Tensor &b) const { return bin(tkc_xor, b, "tkc_xor"); }
  Tensor shl(const Tensor &b) const { return bin(tkc_shl, b, "tkc_shl"); }
  Tensor shr(const Tensor &b) const { return bin(tkc_shr, b, "tkc_shr"); }
  Tensor dot4(const Tensor &b) const { return bin(tkc_dot4, b, "tkc_dot4"); }
  Tensor atan2(const Tensor &x) const { return bin(tkc_atan2, x, "tkc_atan2"); }  // this is y
  // the same with a scalar right side (a.pow(2), a.maximum(0), ...)
  template <class S, detail::if_scalar<S> = 0> Tensor add(S s) const { return add(scalar_like(s)); }
  template <class S, detail::if_scalar<S> = 0> Tensor sub(S s) const { return sub(scalar_like(s)); }
  template <class S, detail::if_scalar<S> = 0> Tensor mul(S s) const { return mul(scalar_like(s)); }
  template <class S, detail::if_scalar<S> = 0> Tensor div(S s) const { return div(scalar_like(s)); }
  template <class S, detail::if_scalar<S> = 0> Tensor idiv(S s) const { return idiv(scalar_like(s)); }
  template <class S, detail::if_scalar<S> = 0> Tensor mod(S s) const { return mod(scalar_like(s)); }
  template <class S, detail::if_scalar<S> = 0> Tensor maximum(S s) const { return maximum(scalar_like(s)); }
  template <class S, detail::if_scalar<S> = 0> Tensor minimum(S s) const { return minimum(scalar_like(s)); }
  template <class S, detail::if_scalar<S> = 0> Tensor pow(S s) const { return pow(scalar_like(s)); }
  template <class S, detail::if_scalar<S> = 0> Tensor lt(S s) const { return lt(scalar_like(s)); }
  template <class S, detail::if_scalar<S> = 0> Tensor le(S s) const { return le(scalar_like(s)); }
  template <class S, detail::if_scalar<S> = 0> Tensor gt(S s) const { return gt(scalar_like(s)); }
  template <class S, detail::if_scalar<S> = 0> Tensor ge(S s) const { return ge(scalar_like(s)); }
  template <class S, detail::if_scalar<S> = 0> Tensor eq(S s) const { return eq(scalar_like(s)); }
  template <class S, detail::if_scalar<S> = 0> Tensor ne(S s) const { return ne(scalar_like(s)); }
  template <class S, detail::if_scalar<S> = 0> Tensor bitwise_and(S s) const { return bitwise_and(scalar_like(s)); }
  template <class S, detail::if_scalar<S> = 0> Tensor bitwise_or(S s) const { return bitwise_or(scalar_like(s)); }
  template <class S, detail::if_scalar<S> = 0> Tensor bitwise_xor(S s) const { return bitwise_xor(scalar_like(s)); }
  template <class S, detail::if_scalar<S> = 0> Tensor shl(S s) const { return shl(scalar_like(s)); }
  template <class S, detail::if_scalar<S> = 0> Tensor shr(S s) const { return shr(scalar_like(s)); }
  // cond.where(a, b) = cond ? a : b (also tkc::where)
  Tensor where(const Tensor &a, const Tensor &b) const {
    return wrap(tkc_where(raw(), a.raw(), b.raw()), "tkc_where");
  }
  template <class S, detail::if_scalar<S> = 0> Tensor where(const Tensor &a, S b) const { return where(a, a.scalar_like(b)); }
  template <class S, detail::if_scalar<S> = 0> Tensor where(S a, const Tensor &b) const { return where(b.scalar_like(a), b); }
  // a + w (b - a)
  Tensor lerp(const Tensor &b, const Tensor &w) const { return wrap(tkc_lerp(raw(), b.raw(), w.raw()), "tkc_lerp"); }
  template <class S, detail::if_scalar<S> = 0> Tensor lerp(const Tensor &b, S w) const { return lerp(b, scalar_like(w)); }

  // ------------------------------------------------------------ elementwise, unary
  Tensor neg() const { return un(tkc_neg, "tkc_neg"); }
  Tensor abs() const { return un(tkc_abs, "tkc_abs"); }
  Tensor recip() const { return un(tkc_recip, "tkc_recip"); }
  Tensor sqrt() const { return un(tkc_sqrt, "tkc_sqrt"); }
  Tensor rsqrt() const { return un(tkc_rsqrt, "tkc_rsqrt"); }
  Tensor square() const { return un(tkc_square, "tkc_square"); }
  Tensor sign() const { return un(tkc_sign, "tkc_sign"); }
  Tensor exp() const { return un(tkc_exp, "tkc_exp"); }
  Tensor exp2() const { return un(tkc_exp2, "tkc_exp2"); }
  Tensor expm1() const { return un(tkc_expm1, "tkc_expm1"); }
  Tensor log() const { return un(tkc_log, "tkc_log"); }
  Tensor log2() const { return un(tkc_log2, "tkc_log2"); }
  Tensor log1p() const { return un(tkc_log1p, "tkc_log1p"); }
  Tensor sin() const { return un(tkc_sin, "tkc_sin"); }
  Tensor cos() const { return un(tkc_cos, "tkc_cos"); }
  Tensor tan() const { return un(tkc_tan, "tkc_tan"); }
  Tensor asin() const { return un(tkc_asin, "tkc_asin"); }
  Tensor acos() const { return un(tkc_acos, "tkc_acos"); }
  Tensor atan() const { return un(tkc_atan, "tkc_atan"); }
  Tensor sinh() const { return un(tkc_sinh, "tkc_sinh"); }
  Tensor cosh() const { return un(tkc_cosh, "tkc_cosh"); }
  Tensor tanh() const { return un(tkc_tanh, "tkc_tanh"); }
  Tensor erf() const { return un(tkc_erf, "tkc_erf"); }
  Tensor sigmoid() const { return un(tkc_sigmoid, "tkc_sigmoid"); }
  Tensor relu() const { return un(tkc_relu, "tkc_relu"); }
  Tensor gelu(bool tanh_approx = false) const { return wrap(tkc_gelu(raw(), tanh_approx ? 1 : 0), "tkc_gelu"); }
  Tensor silu() const { return un(tkc_silu, "tkc_silu"); }
  Tensor leaky_relu(double slope = 0.01) const { return wrap(tkc_leaky_relu(raw(), slope), "tkc_leaky_relu"); }
  Tensor elu(double alpha = 1.0) const { return wrap(tkc_elu(raw(), alpha), "tkc_elu"); }
  Tensor selu() const { return un(tkc_selu, "tkc_selu"); }
  Tensor softplus(double beta = 1.0) const { return wrap(tkc_softplus(raw(), beta), "tkc_softplus"); }
  Tensor hardsigmoid() const { return un(tkc_hardsigmoid, "tkc_hardsigmoid"); }
  Tensor hardswish() const { return un(tkc_hardswish, "tkc_hardswish"); }
  Tensor mish() const { return un(tkc_mish, "tkc_mish"); }
  Tensor floor() const { return un(tkc_floor, "tkc_floor"); }
  Tensor ceil() const { return un(tkc_ceil, "tkc_ceil"); }
  Tensor round() const { return un(tkc_round, "tkc_round"); }
  Tensor trunc() const { return un(tkc_trunc, "tkc_trunc"); }
  Tensor isnan() const { return un(tkc_isnan, "tkc_isnan"); }
  Tensor isinf() const { return un(tkc_isinf, "tkc_isinf"); }
  Tensor isfinite() const { return un(tkc_isfinite, "tkc_isfinite"); }
  Tensor clamp(double lo, double hi) const { return wrap(tkc_clamp(raw(), lo, hi), "tkc_clamp"); }
  Tensor cast(tkc_dtype dt) const { return wrap(tkc_cast(raw(), dt), "tkc_cast"); }
  template <class T> Tensor cast() const { return cast(detail::dtype_for<T>()); }
  Tensor bitcast(tkc_dtype dt) const { return wrap(tkc_bitcast(raw(), dt), "tkc_bitcast"); }
  template <class T> Tensor bitcast() const { return bitcast(detail::dtype_for<T>()); }

  // ------------------------------------------------------------ reductions ({} = all axes)
  Tensor sum(const std::vector<int> &axes = {}, bool keepdim = false) const { return red(tkc_sum, axes, keepdim, "tkc_sum"); }
  Tensor max(const std::vector<int> &axes = {}, bool keepdim = false) const { return red(tkc_max, axes, keepdim, "tkc_max"); }
  Tensor min(const std::vector<int> &axes = {}, bool keepdim = false) const { return red(tkc_min, axes, keepdim, "tkc_min"); }
  Tensor mean(const std::vector<int> &axes = {}, bool keepdim = false) const { return red(tkc_mean, axes, keepdim, "tkc_mean"); }
  Tensor prod(const std::vector<int> &axes = {}, bool keepdim = false) const { return red(tkc_prod, axes, keepdim, "tkc_prod"); }
  Tensor logsumexp(const std::vector<int> &axes = {}, bool keepdim = false) const {
    return red(tkc_logsumexp, axes, keepdim, "tkc_logsumexp");
  }
  Tensor any(const std::vector<int> &axes = {}, bool keepdim = false) const { return red(tkc_any, axes, keepdim, "tkc_any"); }
  Tensor all(const std::vector<int> &axes = {}, bool keepdim = false) const { return red(tkc_all, axes, keepdim, "tkc_all"); }
  Tensor var(const std::vector<int> &axes = {}, bool keepdim = false, double correction = 1.0) const {
    return wrap(tkc_var(raw(), naxes(axes), axes_ptr(axes), keepdim ? 1 : 0, correction), "tkc_var");
  }
  Tensor std(const std::vector<int> &axes = {}, bool keepdim = false, double correction = 1.0) const {
    return wrap(tkc_std(raw(), naxes(axes), axes_ptr(axes), keepdim ? 1 : 0, correction), "tkc_std");
  }
  Tensor sum_acc(tkc_dtype acc, const std::vector<int> &axes = {}, bool keepdim = false) const {
    return wrap(tkc_sum_acc(raw(), naxes(axes), axes_ptr(axes), keepdim ? 1 : 0, acc), "tkc_sum_acc");
  }
  // inclusive scans along one axis
  Tensor cumsum(int axis = -1) const { return wrap(tkc_cumsum(raw(), axis), "tkc_cumsum"); }
  Tensor cummax(int axis = -1) const { return wrap(tkc_cummax(raw(), axis), "tkc_cummax"); }
  Tensor cumprod(int axis = -1) const { return wrap(tkc_cumprod(raw(), axis), "tkc_cumprod"); }

  // ------------------------------------------------------------ movement and shape
  Tensor reshape(const std::vector<int64_t> &shape) const {  // one -1 allowed
    return wrap(tkc_reshape(raw(), detail::ndim_of(shape.size(), "tkc_reshape"), shape.data()), "tkc_reshape");
  }
  Tensor permute(const std::vector<int> &order) const {  // ndim entries
    want_len(order.size(), 1, "tkc_permute", "order");
    return wrap(tkc_permute(raw(), order.data()), "tkc_permute");
  }
  Tensor transpose(int ax0 = -2, int ax1 = -1) const { return wrap(tkc_transpose(raw(), ax0, ax1), "tkc_transpose"); }
  Tensor expand(const std::vector<int64_t> &shape) const {  // size-1 dims grow; -1 keeps
    return wrap(tkc_expand(raw(), detail::ndim_of(shape.size(), "tkc_expand"), shape.data()), "tkc_expand");
  }
  Tensor pad(const std::vector<int64_t> &pads, double value = 0.0) const {  // before, after per axis
    want_len(pads.size(), 2, "tkc_pad", "pads");
    return wrap(tkc_pad(raw(), pads.data(), value), "tkc_pad");
  }
  Tensor shrink(const std::vector<int64_t> &ranges) const {  // start, end per axis
    want_len(ranges.size(), 2, "tkc_shrink", "ranges");
    return wrap(tkc_shrink(raw(), ranges.data()), "tkc_shrink");
  }
  Tensor flip(const std::vector<int> &axes) const { return wrap(tkc_flip(raw(), naxes(axes), axes_ptr(axes)), "tkc_flip"); }
  Tensor contiguous() const { return un(tkc_contiguous, "tkc_contiguous"); }
  Tensor squeeze(const std::vector<int> &axes = {}) const {  // {} = every size-1 axis
    return wrap(tkc_squeeze(raw(), naxes(axes), axes_ptr(axes)), "tkc_squeeze");
  }
  Tensor unsqueeze(int axis) const { return wrap(tkc_unsqueeze(raw(), axis), "tkc_unsqueeze"); }
  Tensor repeat(const std::vector<int64_t> &repeats) const {
    return wrap(tkc_repeat(raw(), detail::ndim_of(repeats.size(), "tkc_repeat"), repeats.empty() ? nullptr : repeats.data()), "tkc_repeat");
  }
  Tensor flatten(int start = 0, int end = -1) const { return wrap(tkc_flatten(raw(), start, end), "tkc_flatten"); }
  Tensor tril(int64_t k = 0) const { return wrap(tkc_tril(raw(), k), "tkc_tril"); }
  Tensor triu(int64_t k = 0) const { return wrap(tkc_triu(raw(), k), "tkc_triu"); }
  // views of pieces of the given sizes along axis
  std::vector<Tensor> split(const std::vector<int64_t> &sizes, int axis = 0) const {
    std::vector<tkc_tensor *> out(sizes.size());
    int n = detail::ndim_of(sizes.size(), "tkc_split");
    detail::check(tkc_split(raw(), axis, n, sizes.empty() ? nullptr : sizes.data(), out.empty() ? nullptr : out.data()), "tkc_split");
    return wrap_all(out, out.size(), "tkc_split");
  }
  // torch.chunk: at most `chunks` views along axis
  std::vector<Tensor> chunk(int chunks, int axis = 0) const {
    std::vector<tkc_tensor *> out(chunks > 0 ? static_cast<size_t>(chunks) : 0);
    int n = tkc_chunk(raw(), axis, chunks, out.empty() ? nullptr : out.data());
    if (n < 0) detail::throw_error(TKC_OK, "tkc_chunk");
    return wrap_all(out, static_cast<size_t>(n), "tkc_chunk");
  }

  // ------------------------------------------------------------ indexing and sorting
  Tensor gather(int axis, const Tensor &index) const { return wrap(tkc_gather(raw(), axis, index.raw()), "tkc_gather"); }
  Tensor index_select(int axis, const Tensor &index) const {
    return wrap(tkc_index_select(raw(), axis, index.raw()), "tkc_index_select");
  }
  Tensor scatter(int axis, const Tensor &index, const Tensor &src) const {
    return wrap(tkc_scatter(raw(), axis, index.raw(), src.raw()), "tkc_scatter");
  }
  Tensor scatter_add(int axis, const Tensor &index, const Tensor &src) const {
    return wrap(tkc_scatter_add(raw(), axis, index.raw(), src.raw()), "tkc_scatter_add");
  }
  Tensor one_hot(int64_t num_classes) const { return wrap(tkc_one_hot(raw(), num_classes), "tkc_one_hot"); }
  Tensor argmax(int axis, bool keepdim = false) const { return wrap(tkc_argmax(raw(), axis, keepdim ? 1 : 0), "tkc_argmax"); }
  Tensor argmin(int axis, bool keepdim = false) const { return wrap(tkc_argmin(raw(), axis, keepdim ? 1 : 0), "tkc_argmin"); }
  Tensor argmax() const { return reshape({-1}).argmax(0); }  // over all elements (flattened index)
  Tensor argmin() const { return reshape({-1}).argmin(0); }
  // {values, indices (int32)}
  std::pair<Tensor, Tensor> sort(int axis = -1, bool descending = false) const {
    tkc_tensor *v = nullptr, *i = nullptr;
    detail::check(tkc_sort(raw(), axis, descending ? 1 : 0, &v, &i), "tkc_sort");
    return wrap_pair(v, i, "tkc_sort");
  }
  std::pair<Tensor, Tensor> topk(int64_t k, int axis = -1, bool largest = true) const {
    tkc_tensor *v = nullptr, *i = nullptr;
    detail::check(tkc_topk(raw(), k, axis, largest ? 1 : 0, &v, &i), "tkc_topk");
    return wrap_pair(v, i, "tkc_topk");
  }

  // ------------------------------------------------------------ composites and NN
  Tensor matmul(const Tensor &b) const { return bin(tkc_matmul, b, "tkc_matmul"); }
  Tensor softmax(int axis = -1) const { return wrap(tkc_softmax(raw(), axis), "tkc_softmax"); }
  Tensor log_softmax(int axis = -1) const { return wrap(tkc_log_softmax(raw(), axis), "tkc_log_softmax"); }
  // x NCHW, w OIHW, bias (O) or {}
  Tensor conv2d(const Tensor &w, const Tensor &bias = {}, int stride = 1, int padding = 0) const {
    return wrap(tkc_conv2d(raw(), w.raw(), opt(bias), stride, padding), "tkc_conv2d");
  }
  // stride {sh, sw}, pad {top, bottom, left, right}, dilation {dh, dw}; {} = the C defaults
  Tensor conv2d_ex(const Tensor &w, const Tensor &bias = {}, const std::vector<int> &stride = {}, const std::vector<int> &pad = {},
                   const std::vector<int> &dilation = {}, int groups = 1) const {
    const char *fn = "tkc_conv2d_ex";
    return wrap(tkc_conv2d_ex(raw(), w.raw(), opt(bias), detail::opt_array(stride, 2, fn, "stride"), detail::opt_array(pad, 4, fn, "pad"),
                              detail::opt_array(dilation, 2, fn, "dilation"), groups),
                fn);
  }
  Tensor conv1d(const Tensor &w, const Tensor &bias = {}, int stride = 1, int pad_left = 0, int pad_right = 0, int dilation = 1,
                int groups = 1) const {
    return wrap(tkc_conv1d(raw(), w.raw(), opt(bias), stride, pad_left, pad_right, dilation, groups), "tkc_conv1d");
  }
  Tensor conv_transpose2d(const Tensor &w, const Tensor &bias = {}, const std::vector<int> &stride = {}, const std::vector<int> &pad = {},
                          const std::vector<int> &output_padding = {}, const std::vector<int> &dilation = {}, int groups = 1) const {
    const char *fn = "tkc_conv_transpose2d";
    return wrap(tkc_conv_transpose2d(raw(), w.raw(), opt(bias), detail::opt_array(stride, 2, fn, "stride"), detail::opt_array(pad, 2, fn, "pad"),
                                     detail::opt_array(output_padding, 2, fn, "output_padding"),
                                     detail::opt_array(dilation, 2, fn, "dilation"), groups),
                fn);
  }
  Tensor max_pool2d(const std::vector<int> &kernel, const std::vector<int> &stride = {}, const std::vector<int> &pad = {},
                    const std::vector<int> &dilation = {}, bool ceil_mode = false) const {
    const char *fn = "tkc_max_pool2d";
    want_kernel(kernel, fn);
    return wrap(tkc_max_pool2d(raw(), kernel.data(), detail::opt_array(stride, 2, fn, "stride"), detail::opt_array(pad, 2, fn, "pad"),
                               detail::opt_array(dilation, 2, fn, "dilation"), ceil_mode ? 1 : 0),
                fn);
  }
  Tensor avg_pool2d(const std::vector<int> &kernel, const std::vector<int> &stride = {}, const std::vector<int> &pad = {},
                    bool ceil_mode = false, bool count_include_pad = true) const {
    const char *fn = "tkc_avg_pool2d";
    want_kernel(kernel, fn);
    return wrap(tkc_avg_pool2d(raw(), kernel.data(), detail::opt_array(stride, 2, fn, "stride"), detail::opt_array(pad, 2, fn, "pad"),
                               ceil_mode ? 1 : 0, count_include_pad ? 1 : 0),
                fn);
  }
  Tensor interpolate(int64_t out_h, int64_t out_w, tkc_interp_mode mode = TKC_INTERP_NEAREST, bool align_corners = false) const {
    return wrap(tkc_interpolate(raw(), out_h, out_w, mode, align_corners ? 1 : 0), "tkc_interpolate");
  }
  // over the last naxes dims; weight / bias {} to leave out
  Tensor layer_norm(int naxes = 1, const Tensor &weight = {}, const Tensor &bias = {}, double eps = 1e-5) const {
    return wrap(tkc_layer_norm(raw(), naxes, opt(weight), opt(bias), eps), "tkc_layer_norm");
  }
  Tensor rms_norm(int naxes = 1, const Tensor &weight = {}, double eps = 1e-6) const {
    return wrap(tkc_rms_norm(raw(), naxes, opt(weight), eps), "tkc_rms_norm");
  }
  Tensor batch_norm(const Tensor &running_mean, const Tensor &running_var, const Tensor &weight = {}, const Tensor &bias = {},
                    double eps = 1e-5) const {
    return wrap(tkc_batch_norm(raw(), running_mean.raw(), running_var.raw(), opt(weight), opt(bias), eps), "tkc_batch_norm");
  }
  // this is q: softmax(q @ k^T * scale + mask) @ v; scale 0 = 1/sqrt(E)
  Tensor attention(const Tensor &k, const Tensor &v, const Tensor &mask = {}, bool causal = false, double scale = 0.0) const {
    return wrap(tkc_scaled_dot_product_attention(raw(), k.raw(), v.raw(), opt(mask), causal ? 1 : 0, scale),
                "tkc_scaled_dot_product_attention");
  }
  // this is log_probs / logits (N, C); target (N) of class indices
  Tensor nll_loss(const Tensor &target, tkc_reduction reduction = TKC_REDUCTION_MEAN) const {
    return wrap(tkc_nll_loss(raw(), target.raw(), reduction), "tkc_nll_loss");
  }
  Tensor cross_entropy(const Tensor &target, tkc_reduction reduction = TKC_REDUCTION_MEAN) const {
    return wrap(tkc_cross_entropy(raw(), target.raw(), reduction), "tkc_cross_entropy");
  }

  // ------------------------------------------------------------ gradients and in-place updates
  // Marks this (float) tensor as a leaf whose gradient backward() accumulates; set it before building
  // graphs from it. Returns *this.
  const Tensor &requires_grad(bool on) const {
    detail::check(tkc_requires_grad(raw(), on ? 1 : 0), "tkc_requires_grad");
    return *this;
  }
  bool requires_grad() const { return flag(tkc_requires_grad_of(raw()), "tkc_requires_grad_of"); }
  // Whether grad() would give a gradient.
  bool has_grad() const { return flag(tkc_has_grad(raw()), "tkc_has_grad"); }
  // Adds d this / d leaf into every requires-grad leaf this (one-element) tensor depends on.
  const Tensor &backward() const {
    detail::check(tkc_backward(raw()), "tkc_backward");
    return *this;
  }
  // The accumulated gradient (lazy), or an empty Tensor (defined() false) when there is none: the
  // tensor does not require one, no backward() yet, or the loss does not depend on it. After
  // zero_grad(): zeros.
  Tensor grad() const {
    if (!has_grad()) return Tensor();
    return wrap(tkc_grad(raw()), "tkc_grad");
  }
  // Fills the accumulated gradient with zeros (on the device: captured steps replay it; backward()
  // adds into the same buffer). Returns *this.
  const Tensor &zero_grad() const {
    detail::check(tkc_zero_grad(raw()), "tkc_zero_grad");
    return *this;
  }
  // The same values, through which no gradient flows.
  Tensor detach() const { return un(tkc_detach, "tkc_detach"); }
  // In place: this tensor's buffer receives value (its shape and dtype) at its next realize; value may
  // read this tensor (w.assign(w - g * lr) reads the old values). Every copy of this Tensor sees it.
  // This tensor must own its whole buffer (made from data, or realized). Returns *this.
  const Tensor &assign(const Tensor &value) const {
    detail::check(tkc_assign(raw(), value.raw()), "tkc_assign");
    return *this;
  }
  // Every element set to s (converted to this tensor's dtype).
  template <class S, detail::if_scalar<S> = 0>
  const Tensor &assign(S s) const {
    return assign(wrap(tkc_scalar(h()->ctx->ctx, dtype(), static_cast<double>(s)), "tkc_scalar").expand(shape()));
  }

  // compound assignment rebinds this handle (other copies keep the old tensor)
  Tensor &operator+=(const Tensor &b) { return *this = add(b); }
  Tensor &operator-=(const Tensor &b) { return *this = sub(b); }
  Tensor &operator*=(const Tensor &b) { return *this = mul(b); }
  Tensor &operator/=(const Tensor &b) { return *this = div(b); }
  template <class S, detail::if_scalar<S> = 0> Tensor &operator+=(S s) { return *this = add(s); }
  template <class S, detail::if_scalar<S> = 0> Tensor &operator-=(S s) { return *this = sub(s); }
  template <class S, detail::if_scalar<S> = 0> Tensor &operator*=(S s) { return *this = mul(s); }
  template <class S, detail::if_scalar<S> = 0> Tensor &operator/=(S s) { return *this = div(s); }

 private:
  friend class Context;
  friend class Jit;
  friend Tensor cat(const std::vector<Tensor> &ts, int axis);
  friend Tensor stack(const std::vector<Tensor> &ts, int axis);
  friend std::vector<Tensor> gradient(const Tensor &y, const std::vector<Tensor> &wrt);
  friend class Optimizer;

  Tensor(std::shared_ptr<detail::CtxState> ctx, tkc_tensor *t) : h_(std::make_shared<detail::Handle>(std::move(ctx), t)) {}

  // Takes ownership of t (a fresh handle of ctx) or throws the C error when it is NULL.
  static Tensor adopt(const std::shared_ptr<detail::CtxState> &ctx, tkc_tensor *t, const char *fn) {
    if (!t) detail::throw_error(TKC_OK, fn);
    try {
      return Tensor(ctx, t);
    } catch (...) {  // std::bad_alloc from make_shared: the handle is not owned yet
      tkc_tensor_free(t);
      throw;
    }
  }
  // results of ops on this tensor belong to its ctx
  Tensor wrap(tkc_tensor *t, const char *fn) const { return adopt(h_->ctx, t, fn); }
  std::vector<Tensor> wrap_all(const std::vector<tkc_tensor *> &ts, size_t n, const char *fn) const {
    std::vector<Tensor> out;
    size_t next = 0;  // ts[next..n) are not owned by a Tensor yet
    try {
      out.reserve(n);
      while (next < n) {
        tkc_tensor *t = ts[next++];
        out.push_back(adopt(h_->ctx, t, fn));  // adopt frees t when it throws
      }
    } catch (...) {
      for (size_t j = next; j < n; j++) tkc_tensor_free(ts[j]);
      throw;
    }
    return out;
  }
  std::pair<Tensor, Tensor> wrap_pair(tkc_tensor *a, tkc_tensor *b, const char *fn) const {
    Tensor ta;
    try {
      ta = wrap(a, fn);
    } catch (...) {
      tkc_tensor_free(b);
      throw;
    }
    return {std::move(ta), wrap(b, fn)};
  }

  const detail::Handle *h() const {
    if (!h_) detail::fail(TKC_EINVAL, "tkc::Tensor: use of an empty tensor (default-constructed or moved-from)");
    return h_.get();
  }
  tkc_tensor *raw() const { return h()->t; }
  // a C 1 / 0 flag; -1 (NULL or freed) throws the C error
  static bool flag(int v, const char *fn) {
    if (v < 0) detail::throw_error(TKC_OK, fn);
    return v != 0;
  }
  static tkc_tensor *opt(const Tensor &t) noexcept { return t.get(); }  // {} = NULL
  Tensor un(tkc_tensor *(*f)(tkc_tensor *), const char *fn) const { return wrap(f(raw()), fn); }
  Tensor bin(tkc_tensor *(*f)(tkc_tensor *, tkc_tensor *), const Tensor &b, const char *fn) const { return wrap(f(raw(), b.raw()), fn); }
  static int naxes(const std::vector<int> &axes) { return detail::ndim_of(axes.size(), "axes"); }
  static const int *axes_ptr(const std::vector<int> &axes) noexcept { return axes.empty() ? nullptr : axes.data(); }
  Tensor red(tkc_tensor *(*f)(tkc_tensor *, int, const int *, int), const std::vector<int> &axes, bool keepdim, const char *fn) const {
    return wrap(f(raw(), naxes(axes), axes_ptr(axes), keepdim ? 1 : 0), fn);
  }
  // the C call reads per * ndim entries: check the length here
  void want_len(size_t got, size_t per, const char *fn, const char *what) const {
    size_t want = per * static_cast<size_t>(ndim());
    if (got != want)
      detail::fail(TKC_EINVAL, std::string(fn) + ": " + what + " needs " + std::to_string(want) + " values for " + std::to_string(ndim()) +
                                   " dims, got " + std::to_string(got));
  }
  static void want_kernel(const std::vector<int> &kernel, const char *fn) {
    if (kernel.size() != 2) detail::fail(TKC_EINVAL, std::string(fn) + ": kernel needs 2 values, got " + std::to_string(kernel.size()));
  }
  template <class T>
  void check_dtype(const char *fn) const {
    constexpr tkc_dtype want = detail::dtype_for<T>();
    tkc_dtype have = dtype();
    if (have != want)
      detail::fail(TKC_EDTYPE, std::string("tkc::Tensor::") + fn + "<" + detail::dtype_name(want) + ">: the tensor is " + detail::dtype_name(have));
  }

  std::shared_ptr<const detail::Handle> h_;
};

// ---------------------------------------------------------------- contexts

class Context {
 public:
  // A ctx on device "CPU", "LLVM", "CUDA", "WEBGPU" or "INTERP"; NULL = $TKC_DEVICE or the best one.
  // Throws tkc::Error (TKC_EDEVICE when the device cannot run here).
  explicit Context(const char *device = nullptr) {
    tkc_ctx *c = tkc_ctx_new(device);
    if (!c) detail::throw_error(TKC_OK, "tkc_ctx_new");
    try {
      s_ = std::make_shared<detail::CtxState>(c);
    } catch (...) {
      tkc_ctx_free(c);
      throw;
    }
  }
  explicit Context(const std::string &device) : Context(device.c_str()) {}
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;
  Context(Context &&) noexcept = default;
  Context &operator=(Context &&) noexcept = default;
  ~Context() = default;  // the tkc_ctx goes when its last tensor does

  static bool available(const std::string &device) noexcept { return tkc_device_available(device.c_str()) != 0; }

  bool defined() const noexcept { return s_ != nullptr; }  // false once moved from
  tkc_ctx *get() const noexcept { return s_ ? s_->ctx : nullptr; }
  std::string device() const { return tkc_ctx_device(state()->ctx); }

  // ------------------------------------------------------------ tensors from data (copied)
  template <class T>
  Tensor tensor(const T *data, const std::vector<int64_t> &shape) const {
    constexpr tkc_dtype dt = detail::dtype_for<T>();
    static_assert(sizeof(T) == 1 || !std::is_same<T, bool>::value, "tkc: bool must be 1 byte");
    return make(dt, shape, data);
  }
  template <class T>
  Tensor tensor(const std::vector<T> &data, const std::vector<int64_t> &shape) const {
    check_size(data.size(), shape);
    if constexpr (std::is_same<T, bool>::value) {
      std::vector<unsigned char> bytes(data.begin(), data.end());
      return make(TKC_BOOL, shape, bytes.data());
    } else {
      return tensor(data.data(), shape);
    }
  }
  template <class T>
  Tensor tensor(const std::vector<T> &data) const {  // 1-D
    return tensor(data, {static_cast<int64_t>(data.size())});
  }
  template <class T>
  Tensor tensor(std::initializer_list<T> data, const std::vector<int64_t> &shape) const {
    return tensor(std::vector<T>(data), shape);
  }
  template <class T>
  Tensor tensor(std::initializer_list<T> data) const {
    return tensor(std::vector<T>(data));
  }
  // Raw: data holds numel * itemsize bytes of dt (float16 bits ...), NULL = zeros.
  Tensor tensor(tkc_dtype dt, const std::vector<int64_t> &shape, const void *data = nullptr) const { return make(dt, shape, data); }

  // ------------------------------------------------------------ lazy constants and generators
  Tensor full(const std::vector<int64_t> &shape, double value, tkc_dtype dt = TKC_FLOAT32) const {
    return adopt(tkc_full(state()->ctx, dt, detail::ndim_of(shape.size(), "tkc_full"), shape.data(), value), "tkc_full");
  }
  Tensor zeros(const std::vector<int64_t> &shape, tkc_dtype dt = TKC_FLOAT32) const { return full(shape, 0.0, dt); }
  Tensor ones(const std::vector<int64_t> &shape, tkc_dtype dt = TKC_FLOAT32) const { return full(shape, 1.0, dt); }
  Tensor scalar(double value, tkc_dtype dt = TKC_FLOAT32) const { return adopt(tkc_scalar(state()->ctx, dt, value), "tkc_scalar"); }
  Tensor arange(double start, double stop, double step = 1.0, tkc_dtype dt = TKC_FLOAT32) const {
    return adopt(tkc_arange(state()->ctx, dt, start, stop, step), "tkc_arange");
  }
  Tensor rand(const std::vector<int64_t> &shape, uint64_t seed = 0, tkc_dtype dt = TKC_FLOAT32) const {
    return adopt(tkc_rand(state()->ctx, dt, detail::ndim_of(shape.size(), "tkc_rand"), shape.data(), seed), "tkc_rand");
  }
  // Takes ownership of a handle of this ctx made by a C call (throws the C error for NULL).
  // A NULL t throws the thread's pending C error (the reason the call failed), else TKC_EINVAL.
  Tensor adopt(tkc_tensor *t, const char *fn = "tkc::Context::adopt") const {
    if (!t && tkc_last_status() == TKC_OK) detail::fail(TKC_EINVAL, std::string(fn) + ": NULL tensor");
    return Tensor::adopt(state_ptr(), t, fn);
  }

  // ------------------------------------------------------------ variables (see tkc.h)
  // A variable's token: a dim wherever shapes and ranges are given (token + c is the variable + c).
  int64_t dim_var(const std::string &name, int64_t min, int64_t max) const {
    int64_t v = tkc_dim_var(state()->ctx, name.c_str(), min, max);
    if (!v) detail::throw_error(TKC_OK, "tkc_dim_var");
    return v;
  }
  void bind(int64_t var, int64_t value) const { detail::check(tkc_dim_bind(state()->ctx, var, value), "tkc_dim_bind"); }
  // A token's bound value (throws when unbound), a plain dim itself.
  int64_t dim_value(int64_t dim) const {
    int64_t v = tkc_dim_value(state()->ctx, dim);
    if (v < 0) detail::throw_error(TKC_OK, "tkc_dim_value");
    return v;
  }
  Tensor dim_scalar(int64_t var) const { return adopt(tkc_dim_scalar(state()->ctx, var), "tkc_dim_scalar"); }

  // ------------------------------------------------------------ settings and statistics
  tkc_stats stats() const {
    tkc_stats st{};
    detail::check(tkc_ctx_stats(state()->ctx, &st), "tkc_ctx_stats");
    return st;
  }
  void set_beam(int width) const { detail::check(tkc_ctx_set_beam(state()->ctx, width), "tkc_ctx_set_beam"); }
  // fn (empty = off) is called on the realizing thread; it must not throw: an exception from it
  // is caught and dropped, as it cannot pass through the C library.
  void set_progress(std::function<void(const tkc_progress &)> fn) const {
    detail::CtxState *s = state();
    if (!fn) {
      detail::check(tkc_ctx_set_progress(s->ctx, nullptr, nullptr), "tkc_ctx_set_progress");
      s->progress = nullptr;
      return;
    }
    s->progress = std::move(fn);
    detail::check(tkc_ctx_set_progress(s->ctx, &Context::on_progress, s), "tkc_ctx_set_progress");
  }

 private:
  static void on_progress(const tkc_progress *p, void *user) noexcept {
    auto *s = static_cast<detail::CtxState *>(user);
    try {
      if (s->progress && p) s->progress(*p);
    } catch (...) {
    }
  }
  detail::CtxState *state() const {
    if (!s_) detail::fail(TKC_EINVAL, "tkc::Context: use of a moved-from context");
    return s_.get();
  }
  const std::shared_ptr<detail::CtxState> &state_ptr() const {
    state();
    return s_;
  }
  Tensor make(tkc_dtype dt, const std::vector<int64_t> &shape, const void *data) const {
    return Tensor::adopt(state_ptr(), tkc_tensor_new(state()->ctx, dt, detail::ndim_of(shape.size(), "tkc_tensor_new"), shape.data(), data),
                         "tkc_tensor_new");
  }
  // data.size() must be the shape's numel (negative dims are left to the C check, which comes first)
  static void check_size(size_t n, const std::vector<int64_t> &shape) {
    int64_t numel = 1;
    for (int64_t d : shape) {
      if (d < 0) return;
      if (d && numel > INT64_MAX / d) numel = INT64_MAX;
      else numel *= d;
    }
    if (static_cast<uint64_t>(numel) != static_cast<uint64_t>(n))
      detail::fail(TKC_ESHAPE, "tkc::Context::tensor: " + std::to_string(n) + " values for shape " + detail::shape_str(shape) + " of " +
                                   std::to_string(numel) + " elements");
  }

  friend class Jit;
  std::shared_ptr<detail::CtxState> s_;
};

inline bool dim_is_var(int64_t dim) noexcept { return tkc_dim_is_var(dim) != 0; }

// ---------------------------------------------------------------- capture and replay (tkc_jit)
// The first call runs fn as usual and records its kernel launches; later calls replay them on the
// new inputs and the variables' current values (Context::bind), without building graphs or compiling.
// fn gets the inputs (Tensors it may keep) and returns nout tensors; an exception from fn comes out
// of the call (the capture is dropped: the next call captures again). The results view the jit's
// output buffers: the next call overwrites their values. Inputs must keep their dtype, shape and
// layout (tkc::Error TKC_EINVAL naming the input otherwise). Move-only; it keeps its ctx alive.
class Jit {
 public:
  using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor> &)>;
  Jit(const Context &ctx, Fn fn, int nout = 1) : s_(std::make_unique<State>()) {
    if (!ctx.defined()) detail::fail(TKC_EINVAL, "tkc::Jit: a moved-from context");
    if (nout < 1) detail::fail(TKC_EINVAL, "tkc::Jit: nout must be >= 1");
    s_->ctx = ctx.state_ptr(), s_->fn = std::move(fn), s_->nout = nout;
    s_->j = tkc_jit_new(ctx.get(), &Jit::trampoline, s_.get());
    if (!s_->j) detail::throw_error(TKC_OK, "tkc_jit_new");
  }
  Jit(const Jit &) = delete;
  Jit &operator=(const Jit &) = delete;
  Jit(Jit &&) noexcept = default;
  Jit &operator=(Jit &&) noexcept = default;
  ~Jit() {
    if (s_) tkc_jit_free(s_->j);
  }

  std::vector<Tensor> operator()(const std::vector<Tensor> &inputs) {
    State *s = state();
    std::vector<tkc_tensor *> in(inputs.size() ? inputs.size() : 1), out(static_cast<size_t>(s->nout), nullptr);
    for (size_t i = 0; i < inputs.size(); i++) in[i] = inputs[i].get();
    s->error = nullptr;
    tkc_status st = tkc_jit_run(s->j, in.data(), detail::ndim_of(inputs.size(), "tkc_jit_run"), out.data(), s->nout);
    if (s->error) {
      for (tkc_tensor *t : out) tkc_tensor_free(t);
      std::exception_ptr e = s->error;
      s->error = nullptr;
      tkc_clear_error();
      std::rethrow_exception(e);
    }
    if (st) {
      for (tkc_tensor *t : out) tkc_tensor_free(t);
      detail::throw_error(st, "tkc_jit_run");
    }
    std::vector<Tensor> res;
    res.reserve(out.size());
    for (size_t i = 0; i < out.size(); i++) {
      try {
        res.push_back(Tensor::adopt(s->ctx, out[i], "tkc_jit_run"));
      } catch (...) {  // the handles not adopted yet
        for (size_t k = i + 1; k < out.size(); k++) tkc_tensor_free(out[k]);
        throw;
      }
    }
    return res;
  }
  int kernels() const { return tkc_jit_kernels(state()->j); }  // of the capture (0 before it)
  int buffers() const { return tkc_jit_buffers(state()->j); }

 private:
  struct State {
    std::shared_ptr<detail::CtxState> ctx;  // the tkc_ctx lives as long as the jit
    Fn fn;
    int nout = 1;
    tkc_jit *j = nullptr;
    std::exception_ptr error;
  };
  // The C callback: fn's inputs as Tensors of their own handles, its outputs handed over likewise.
  static tkc_status trampoline(tkc_ctx *, tkc_tensor *const *in, int nin, tkc_tensor **out, int nout, void *user) noexcept {
    auto *s = static_cast<State *>(user);
    try {
      std::vector<Tensor> args;
      for (int i = 0; i < nin; i++) args.push_back(Tensor::adopt(s->ctx, tkc_tensor_ref(in[i]), "tkc_tensor_ref"));
      std::vector<Tensor> res = s->fn(args);
      if (static_cast<int>(res.size()) != nout)
        detail::fail(TKC_EINVAL, "tkc::Jit: the function returned " + std::to_string(res.size()) + " tensors, nout is " + std::to_string(nout));
      for (int i = 0; i < nout; i++)
        if (!(out[i] = tkc_tensor_ref(res[static_cast<size_t>(i)].get()))) detail::throw_error(TKC_OK, "tkc_tensor_ref");
      return TKC_OK;
    } catch (...) {
      for (int i = 0; i < nout; i++) tkc_tensor_free(out[i]), out[i] = nullptr;
      s->error = std::current_exception();
      return TKC_ERUNTIME;
    }
  }
  State *state() const {
    if (!s_) detail::fail(TKC_EINVAL, "tkc::Jit: use of a moved-from jit");
    return s_.get();
  }
  std::unique_ptr<State> s_;
};

// ---------------------------------------------------------------- free functions

inline Tensor matmul(const Tensor &a, const Tensor &b) { return a.matmul(b); }
inline Tensor where(const Tensor &cond, const Tensor &a, const Tensor &b) { return cond.where(a, b); }
template <class S, detail::if_scalar<S> = 0> Tensor where(const Tensor &cond, const Tensor &a, S b) { return cond.where(a, b); }
template <class S, detail::if_scalar<S> = 0> Tensor where(const Tensor &cond, S a, const Tensor &b) { return cond.where(a, b); }
inline Tensor maximum(const Tensor &a, const Tensor &b) { return a.maximum(b); }
inline Tensor minimum(const Tensor &a, const Tensor &b) { return a.minimum(b); }
inline Tensor pow(const Tensor &a, const Tensor &b) { return a.pow(b); }
inline Tensor atan2(const Tensor &y, const Tensor &x) { return y.atan2(x); }
inline Tensor lerp(const Tensor &a, const Tensor &b, const Tensor &w) { return a.lerp(b, w); }
inline Tensor scaled_dot_product_attention(const Tensor &q, const Tensor &k, const Tensor &v, const Tensor &mask = {}, bool causal = false,
                                           double scale = 0.0) {
  return q.attention(k, v, mask, causal, scale);
}

namespace detail {
inline std::vector<tkc_tensor *> raw_list(const std::vector<Tensor> &ts, const char *fn) {
  std::vector<tkc_tensor *> r(ts.size());
  for (size_t i = 0; i < ts.size(); i++) {
    r[i] = ts[i].get();
    if (!r[i]) fail(TKC_EINVAL, std::string(fn) + ": tensor " + std::to_string(i) + " is empty");
  }
  ndim_of(ts.size(), fn);
  return r;
}
}  // namespace detail

// joined along an existing axis / stacked along a new one (TKC_EINVAL for an empty list)
inline Tensor cat(const std::vector<Tensor> &ts, int axis = 0) {
  std::vector<tkc_tensor *> r = detail::raw_list(ts, "tkc_cat");
  if (r.empty()) detail::fail(TKC_EINVAL, "tkc_cat: no tensors");
  return ts[0].wrap(tkc_cat(static_cast<int>(r.size()), r.data(), axis), "tkc_cat");
}
inline Tensor stack(const std::vector<Tensor> &ts, int axis = 0) {
  std::vector<tkc_tensor *> r = detail::raw_list(ts, "tkc_stack");
  if (r.empty()) detail::fail(TKC_EINVAL, "tkc_stack: no tensors");
  return ts[0].wrap(tkc_stack(static_cast<int>(r.size()), r.data(), axis), "tkc_stack");
}

// ---------------------------------------------------------------- gradients, realizing several tensors

// d y / d wrt[i] as new lazy tensors (zeros for a tensor y does not depend on), accumulating nothing
// into grad(); y unrealized or built from requires-grad leaves. {} gives {}.
inline std::vector<Tensor> gradient(const Tensor &y, const std::vector<Tensor> &wrt) {
  std::vector<tkc_tensor *> r = detail::raw_list(wrt, "tkc_gradient");
  if (r.empty()) return {};
  std::vector<tkc_tensor *> out(r.size(), nullptr);
  detail::check(tkc_gradient(y.raw(), static_cast<int>(r.size()), r.data(), out.data()), "tkc_gradient");
  return y.wrap_all(out, out.size(), "tkc_gradient");
}

// Computes the tensors in one schedule: what they share (a gradient read by several updates) is
// computed once. tkc::realize_all({a, b}) or tkc::realize_all(a, b).
inline void realize_all(const std::vector<Tensor> &ts) {
  std::vector<tkc_tensor *> r = detail::raw_list(ts, "tkc_realize_all");
  if (!r.empty()) detail::check(tkc_realize_all(static_cast<int>(r.size()), r.data()), "tkc_realize_all");
}
template <class... Ts, std::enable_if_t<(sizeof...(Ts) > 0) && (std::is_same<std::decay_t<Ts>, Tensor>::value && ...), int> = 0>
void realize_all(const Ts &...ts) {
  realize_all(std::vector<Tensor>{ts...});
}

// ---------------------------------------------------------------- optimizers (tkc_optim)
// tinygrad's nn/optim.py over parameters that require gradients (see tkc.h for the update rules).
// step() updates every parameter that has a gradient, and the state, in place, in one schedule; in a
// tkc::Jit it is captured with the rest of the train step, and set_lr() is seen by later replays (the
// learning rate lives on the device). Move-only; the optimizer holds its own handles to the
// parameters and keeps their ctx alive. A moved-from optimizer throws TKC_EINVAL when used.
class Optimizer {
 public:
  Optimizer(const Optimizer &) = delete;
  Optimizer &operator=(const Optimizer &) = delete;
  Optimizer(Optimizer &&o) noexcept : ctx_(std::move(o.ctx_)), o_(std::exchange(o.o_, nullptr)), lr_(o.lr_) {}
  Optimizer &operator=(Optimizer &&o) noexcept {
    if (this != &o) {
      tkc_optim_free(o_);
      ctx_ = std::move(o.ctx_), o_ = std::exchange(o.o_, nullptr), lr_ = o.lr_;
    }
    return *this;
  }
  ~Optimizer() { tkc_optim_free(o_); }  // before ctx_ lets the ctx go

  bool defined() const noexcept { return o_ != nullptr; }
  tkc_optim *get() const noexcept { return o_; }
  void step() const { detail::check(tkc_optim_step(raw()), "tkc_optim_step"); }
  void zero_grad() const { detail::check(tkc_optim_zero_grad(raw()), "tkc_optim_zero_grad"); }
  void set_lr(double lr) {
    detail::check(tkc_optim_set_lr(raw(), lr), "tkc_optim_set_lr");
    lr_ = lr;
  }
  double lr() const noexcept { return lr_; }

 protected:
  // make(ctx, n, params) is tkc_sgd_new / tkc_adam_new with the other arguments bound
  template <class Make>
  Optimizer(const std::vector<Tensor> &params, double lr, const char *fn, Make make) : lr_(lr) {
    std::vector<tkc_tensor *> r = detail::raw_list(params, fn);
    if (r.empty()) detail::fail(TKC_EINVAL, std::string(fn) + ": needs at least one parameter");
    for (const Tensor &p : params)
      if (p.ctx() != params[0].ctx()) detail::fail(TKC_EINVAL, std::string(fn) + ": the parameters belong to different contexts");
    ctx_ = params[0].h()->ctx;
    o_ = make(ctx_->ctx, static_cast<int>(r.size()), r.data());
    if (!o_) detail::throw_error(TKC_OK, fn);
  }

 private:
  tkc_optim *raw() const {
    if (!o_) detail::fail(TKC_EINVAL, "tkc::Optimizer: use of a moved-from optimizer");
    return o_;
  }
  std::shared_ptr<detail::CtxState> ctx_;
  tkc_optim *o_ = nullptr;
  double lr_;
};

// g += weight_decay p;  b = momentum b + g;  g = nesterov ? g + momentum b : b;  p -= lr g
class SGD : public Optimizer {
 public:
  SGD(const std::vector<Tensor> &params, double lr, double momentum = 0.0, double weight_decay = 0.0, bool nesterov = false)
      : Optimizer(params, lr, "tkc_sgd_new", [&](tkc_ctx *c, int n, tkc_tensor *const *ps) {
          return tkc_sgd_new(c, n, ps, lr, momentum, weight_decay, nesterov ? 1 : 0);
        }) {}
};

// g += weight_decay p;  m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  p -= lr m / (1-b1^t) / (sqrt(v / (1-b2^t)) + eps)
class Adam : public Optimizer {
 public:
  explicit Adam(const std::vector<Tensor> &params, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8,
                double weight_decay = 0.0)
      : Adam(params, lr, beta1, beta2, eps, weight_decay, false) {}

 protected:
  Adam(const std::vector<Tensor> &params, double lr, double beta1, double beta2, double eps, double weight_decay, bool decoupled)
      : Optimizer(params, lr, "tkc_adam_new", [&](tkc_ctx *c, int n, tkc_tensor *const *ps) {
          return tkc_adam_new(c, n, ps, lr, beta1, beta2, eps, weight_decay, decoupled ? 1 : 0);
        }) {}
};

// Adam with decoupled weight decay: p -= lr (m / (1-b1^t) / (sqrt(v / (1-b2^t)) + eps) + weight_decay p)
class AdamW : public Adam {
 public:
  explicit AdamW(const std::vector<Tensor> &params, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8,
                 double weight_decay = 0.01)
      : Adam(params, lr, beta1, beta2, eps, weight_decay, true) {}
};

// ---------------------------------------------------------------- operators

inline Tensor operator-(const Tensor &a) { return a.neg(); }
inline Tensor operator+(const Tensor &a, const Tensor &b) { return a.add(b); }
inline Tensor operator-(const Tensor &a, const Tensor &b) { return a.sub(b); }
inline Tensor operator*(const Tensor &a, const Tensor &b) { return a.mul(b); }
inline Tensor operator/(const Tensor &a, const Tensor &b) { return a.div(b); }
inline Tensor operator%(const Tensor &a, const Tensor &b) { return a.mod(b); }
inline Tensor operator&(const Tensor &a, const Tensor &b) { return a.bitwise_and(b); }
inline Tensor operator|(const Tensor &a, const Tensor &b) { return a.bitwise_or(b); }
inline Tensor operator^(const Tensor &a, const Tensor &b) { return a.bitwise_xor(b); }
inline Tensor operator<(const Tensor &a, const Tensor &b) { return a.lt(b); }
inline Tensor operator<=(const Tensor &a, const Tensor &b) { return a.le(b); }
inline Tensor operator>(const Tensor &a, const Tensor &b) { return a.gt(b); }
inline Tensor operator>=(const Tensor &a, const Tensor &b) { return a.ge(b); }
inline Tensor operator==(const Tensor &a, const Tensor &b) { return a.eq(b); }
inline Tensor operator!=(const Tensor &a, const Tensor &b) { return a.ne(b); }

// tensor op scalar / scalar op tensor (the scalar takes the dtype scalar_like gives it)
template <class S, detail::if_scalar<S> = 0> Tensor operator+(const Tensor &a, S s) { return a.add(a.scalar_like(s)); }
template <class S, detail::if_scalar<S> = 0> Tensor operator+(S s, const Tensor &a) { return a.scalar_like(s).add(a); }
template <class S, detail::if_scalar<S> = 0> Tensor operator-(const Tensor &a, S s) { return a.sub(a.scalar_like(s)); }
template <class S, detail::if_scalar<S> = 0> Tensor operator-(S s, const Tensor &a) { return a.scalar_like(s).sub(a); }
template <class S, detail::if_scalar<S> = 0> Tensor operator*(const Tensor &a, S s) { return a.mul(a.scalar_like(s)); }
template <class S, detail::if_scalar<S> = 0> Tensor operator*(S s, const Tensor &a) { return a.scalar_like(s).mul(a); }
template <class S, detail::if_scalar<S> = 0> Tensor operator/(const Tensor &a, S s) { return a.div(a.scalar_like(s)); }
template <class S, detail::if_scalar<S> = 0> Tensor operator/(S s, const Tensor &a) { return a.scalar_like(s).div(a); }
template <class S, detail::if_scalar<S> = 0> Tensor operator%(const Tensor &a, S s) { return a.mod(a.scalar_like(s)); }
template <class S, detail::if_scalar<S> = 0> Tensor operator%(S s, const Tensor &a) { return a.scalar_like(s).mod(a); }
template <class S, detail::if_scalar<S> = 0> Tensor operator&(const Tensor &a, S s) { return a.bitwise_and(a.scalar_like(s)); }
template <class S, detail::if_scalar<S> = 0> Tensor operator&(S s, const Tensor &a) { return a.scalar_like(s).bitwise_and(a); }
template <class S, detail::if_scalar<S> = 0> Tensor operator|(const Tensor &a, S s) { return a.bitwise_or(a.scalar_like(s)); }
template <class S, detail::if_scalar<S> = 0> Tensor operator|(S s, const Tensor &a) { return a.scalar_like(s).bitwise_or(a); }
template <class S, detail::if_scalar<S> = 0> Tensor operator^(const Tensor &a, S s) { return a.bitwise_xor(a.scalar_like(s)); }
template <class S, detail::if_scalar<S> = 0> Tensor operator^(S s, const Tensor &a) { return a.scalar_like(s).bitwise_xor(a); }
template <class S, detail::if_scalar<S> = 0> Tensor operator<(const Tensor &a, S s) { return a.lt(a.scalar_like(s)); }
template <class S, detail::if_scalar<S> = 0> Tensor operator<(S s, const Tensor &a) { return a.scalar_like(s).lt(a); }
template <class S, detail::if_scalar<S> = 0> Tensor operator<=(const Tensor &a, S s) { return a.le(a.scalar_like(s)); }
template <class S, detail::if_scalar<S> = 0> Tensor operator<=(S s, const Tensor &a) { return a.scalar_like(s).le(a); }
template <class S, detail::if_scalar<S> = 0> Tensor operator>(const Tensor &a, S s) { return a.gt(a.scalar_like(s)); }
template <class S, detail::if_scalar<S> = 0> Tensor operator>(S s, const Tensor &a) { return a.scalar_like(s).gt(a); }
template <class S, detail::if_scalar<S> = 0> Tensor operator>=(const Tensor &a, S s) { return a.ge(a.scalar_like(s)); }
template <class S, detail::if_scalar<S> = 0> Tensor operator>=(S s, const Tensor &a) { return a.scalar_like(s).ge(a); }
template <class S, detail::if_scalar<S> = 0> Tensor operator==(const Tensor &a, S s) { return a.eq(a.scalar_like(s)); }
template <class S, detail::if_scalar<S> = 0> Tensor operator==(S s, const Tensor &a) { return a.scalar_like(s).eq(a); }
template <class S, detail::if_scalar<S> = 0> Tensor operator!=(const Tensor &a, S s) { return a.ne(a.scalar_like(s)); }
template <class S, detail::if_scalar<S> = 0> Tensor operator!=(S s, const Tensor &a) { return a.scalar_like(s).ne(a); }

}  // namespace tkc

#endif  // TKC_HPP
