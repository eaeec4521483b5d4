// C++ exceptions turned into error strings at the shim's C boundary, shared by every file of
// the shim: a call that throws returns `on_error` and hands the message back through `error`
// (malloc'ed; the Rust side frees it).
#pragma once

#include <c10/util/Exception.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

namespace replay_shim {

inline char* dup_string(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

inline void set_error(char** error, const std::string& message) {
  if (error) *error = dup_string(message);
}

// Runs `f`, turning any C++ exception into an error string.
template <typename F, typename R>
R guarded(char** error, R on_error, F&& f) {
  try {
    return f();
  } catch (const c10::Error& e) {
    set_error(error, e.what_without_backtrace());
  } catch (const std::exception& e) {
    set_error(error, e.what());
  } catch (...) {
    set_error(error, "unknown C++ exception");
  }
  return on_error;
}

}  // namespace replay_shim
