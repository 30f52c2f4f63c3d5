#include "redis/url.h"

#include <charconv>
#include <string>

namespace warmpool {
namespace {

bool ParseInt(std::string_view text, int min, int max, int* out) {
  if (text.empty()) return false;
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return false;
  if (value < min || value > max) return false;
  *out = value;
  return true;
}

std::string PercentDecode(std::string_view in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%' && i + 2 < in.size()) {
      int v = 0;
      auto [p, ec] = std::from_chars(in.data() + i + 1, in.data() + i + 3, v, 16);
      if (ec == std::errc() && p == in.data() + i + 3) {
        out.push_back(static_cast<char>(v));
        i += 2;
        continue;
      }
    }
    out.push_back(in[i]);
  }
  return out;
}

// host[:port][/db]; IPv6 as [::1]:6379.
bool ParseHostPortDb(std::string_view rest, RedisEndpoint* ep, std::string* error) {
  std::string_view hostport = rest;
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    hostport = rest.substr(0, slash);
    std::string_view db = rest.substr(slash + 1);
    if (!db.empty() && !ParseInt(db, 0, 65535, &ep->db)) {
      *error = "database index '" + std::string(db) + "' is not a non-negative integer";
      return false;
    }
  }
  std::string_view host = hostport;
  std::string_view port;
  if (!hostport.empty() && hostport.front() == '[') {
    auto close = hostport.find(']');
    if (close == std::string_view::npos) {
      *error = "unterminated IPv6 address";
      return false;
    }
    host = hostport.substr(1, close - 1);
    std::string_view after = hostport.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        *error = "expected ':' after IPv6 address";
        return false;
      }
      port = after.substr(1);
    }
  } else if (auto colon = hostport.rfind(':'); colon != std::string_view::npos) {
    host = hostport.substr(0, colon);
    port = hostport.substr(colon + 1);
  }
  if (host.empty()) {
    *error = "missing host";
    return false;
  }
  // Unbracketed, a ':' is ambiguous (IPv6 needs [::1]) and "user:password:port" with a missing
  // '@' would make the password part of the host that Redacted() prints. The host is not echoed.
  if (host.find_first_of("[]") != std::string_view::npos ||
      (hostport.front() != '[' && host.find(':') != std::string_view::npos)) {
    *error = "host must be a name, an IPv4 address or [IPv6] (is an '@' missing?)";
    return false;
  }
  ep->host = std::string(host);
  if (!port.empty() && !ParseInt(port, 1, 65535, &ep->port)) {
    *error = "port '" + std::string(port) + "' is not in 1..65535";
    return false;
  }
  return true;
}

}  // namespace

std::string RedisEndpoint::Redacted() const {
  std::string out = "redis://";
  if (!username.empty() || !password.empty()) {
    out += username;
    if (!password.empty()) out += ":***";
    out += "@";
  }
  // Appended piece by piece: GCC 12 -O3 misreads `":" + std::to_string(port)` as an overlapping
  // copy (-Werror=restrict, a GCC 12 false positive).
  const bool v6 = host.find(':') != std::string::npos;
  if (v6) {
    out.append("[").append(host).append("]");
  } else {
    out.append(host);
  }
  out.append(":").append(std::to_string(port)).append("/").append(std::to_string(db));
  return out;
}

std::optional<RedisEndpoint> ParseRedisUrl(std::string_view url, std::string* error) {
  RedisEndpoint ep;
  std::string_view rest = url;
  constexpr std::string_view kScheme = "redis://";
  if (rest.starts_with("rediss://") || rest.starts_with("unix://")) {
    *error = "scheme not supported (use redis://host:port/db)";
    return std::nullopt;
  }
  if (rest.starts_with(kScheme)) rest.remove_prefix(kScheme.size());
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (auto colon = userinfo.find(':'); colon != std::string_view::npos) {
      ep.username = PercentDecode(userinfo.substr(0, colon));
      ep.password = PercentDecode(userinfo.substr(colon + 1));
    } else {
      // "redis://secret@host" is how redis-py reads a bare password.
      ep.password = PercentDecode(userinfo);
    }
  }
  if (auto q = rest.find('?'); q != std::string_view::npos) rest = rest.substr(0, q);
  if (!ParseHostPortDb(rest, &ep, error)) return std::nullopt;
  return ep;
}

std::optional<RedisEndpoint> ParseRedisAddress(std::string_view address, std::string* error) {
  if (address.find('@') != std::string_view::npos ||
      address.find("://") != std::string_view::npos) {
    *error = "must be host:port[/db] without scheme or credentials";
    return std::nullopt;
  }
  RedisEndpoint ep;
  if (!ParseHostPortDb(address, &ep, error)) return std::nullopt;
  return ep;
}

}  // namespace warmpool
