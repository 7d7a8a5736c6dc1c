#pragma once

#include <cassert>
#include <type_traits>
#include <utility>
#include <variant>

#include "common/error.h"

namespace tandem {

// A stand-in for std::expected<T, Error> (GCC 12 has none), with the same spelling so that the
// switch is a search-and-replace once the toolchain catches up.
template <typename E>
class Unexpected {
 public:
  explicit Unexpected(E e) : error_(std::move(e)) {}
  E& error() & { return error_; }
  E&& error() && { return std::move(error_); }

 private:
  E error_;
};

inline Unexpected<Error> fail(ErrorCode code, std::string message) {
  return Unexpected<Error>(Error{code, std::move(message)});
}
inline Unexpected<Error> fail(Error e) { return Unexpected<Error>(std::move(e)); }

// A value or why there is none. E is an Error (something to report: it carries a code and a
// message) unless the failure is data to count rather than report: the wire's Checked<T> is a
// Result<T, Rejection>, which takes the Rejection itself (return Rejection::kTruncated;).
template <typename T, typename E = Error>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit on purpose
  Result(Unexpected<E> u) : v_(std::in_place_index<1>, std::move(u).error()) {}  // NOLINT
  template <typename U = E, std::enable_if_t<!std::is_same_v<U, Error>, int> = 0>
  Result(E e) : v_(std::in_place_index<1>, std::move(e)) {}  // NOLINT: implicit on purpose

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & {
    assert(has_value());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(has_value());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(has_value());
    return std::get<0>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const E& error() const {
    assert(!has_value());
    return std::get<1>(v_);
  }

 private:
  std::variant<T, E> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Unexpected<Error> u) : err_(std::move(u).error()), ok_(false) {}  // NOLINT

  bool has_value() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const {
    assert(!ok_);
    return err_;
  }

 private:
  Error err_;
  bool ok_ = true;
};

}  // namespace tandem
