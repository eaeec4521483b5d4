// What every file of the shim shares: C++ exceptions turned into error strings at its C
// boundary (a call that throws returns `on_error` and hands the message back through `error`,
// malloc'ed; the Rust side frees it), and the escaping of strings written into JSON.
#pragma once

#include <c10/util/Exception.h>

#include <cstdio>
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

// `s` escaped for the inside of a JSON string (quotes not added).
inline std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace replay_shim
