// Frames, and Outcome to bytes and back (see wire.h).
#include "wire.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace burnmark::wire {
namespace {

// 2: the tangents flag and Outcome::tangent; 3: the hessian flag and Outcome::hvp
constexpr std::uint32_t kVersion = 3;
// A response holds at most a few tensors of the programs' capped sizes; anything larger is a
// corrupt frame, not something to allocate.
constexpr std::uint32_t kMaxFrame = 1u << 28;

template <class T> void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}
void put_string(std::string& out, const std::string& s) {
  put<std::uint32_t>(out, static_cast<std::uint32_t>(s.size()));
  out += s;
}
void put_doubles(std::string& out, const std::vector<double>& v) {
  put<std::uint64_t>(out, v.size());
  if (!v.empty()) out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
}
void put_tensor(std::string& out, const HostTensor& t) {
  put<std::uint8_t>(out, static_cast<std::uint8_t>(t.shape.rank()));
  for (int d = 0; d < t.shape.rank(); ++d)
    put<std::int64_t>(out, t.shape[d]);
  put_doubles(out, t.values);
  put_doubles(out, t.error_bound);
}

// Reads from a frame, failing (and staying failed) on a short frame.
class Reader {
public:
  explicit Reader(const std::string& frame) : frame_(frame) {}
  template <class T> T get() {
    T value{};
    if (!take(sizeof value)) return value;
    std::memcpy(&value, frame_.data() + pos_ - sizeof value, sizeof value);
    return value;
  }
  std::string get_string() {
    const auto n = get<std::uint32_t>();
    if (!take(n)) return {};
    return frame_.substr(pos_ - n, n);
  }
  std::vector<double> get_doubles() {
    const auto n = get<std::uint64_t>();
    if (n > kMaxFrame / sizeof(double) || !take(n * sizeof(double)) || n == 0) return {};
    std::vector<double> v(n);
    std::memcpy(v.data(), frame_.data() + pos_ - n * sizeof(double), n * sizeof(double));
    return v;
  }
  HostTensor get_tensor() {
    HostTensor t;
    const auto rank = get<std::uint8_t>();
    if (rank > kMaxRank) ok_ = false;
    for (int d = 0; ok_ && d < rank; ++d)
      t.shape.push_back(get<std::int64_t>());
    t.values = get_doubles();
    t.error_bound = get_doubles();
    return t;
  }
  bool done() const { return ok_ && pos_ == frame_.size(); }

private:
  bool take(std::size_t n) {
    if (!ok_ || frame_.size() - pos_ < n) return ok_ = false;
    pos_ += n;
    return true;
  }
  const std::string& frame_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

} // namespace

std::string encode_request(const Request& request) {
  std::string out;
  put<std::uint32_t>(out, kVersion);
  put<std::uint8_t>(out, request.gradients ? 1 : 0);
  put<std::uint8_t>(out, request.tangents ? 1 : 0);
  put<std::uint8_t>(out, request.hessian ? 1 : 0);
  put_string(out, request.program_text);
  return out;
}

std::optional<Request> decode_request(const std::string& frame) {
  Reader r(frame);
  if (r.get<std::uint32_t>() != kVersion) return std::nullopt;
  Request request;
  request.gradients = r.get<std::uint8_t>() != 0;
  request.tangents = r.get<std::uint8_t>() != 0;
  request.hessian = r.get<std::uint8_t>() != 0;
  request.program_text = r.get_string();
  if (!r.done()) return std::nullopt;
  return request;
}

std::string encode_response(const Outcome& outcome, const std::string& note) {
  std::string out;
  put<std::uint32_t>(out, kVersion);
  put<std::uint8_t>(out, static_cast<std::uint8_t>(outcome.status));
  put<std::uint8_t>(out, outcome.error_possible ? 1 : 0);
  put_string(out, outcome.message);
  put_string(out, note);
  put_tensor(out, outcome.root);
  put_tensor(out, outcome.tangent);
  put<std::uint32_t>(out, static_cast<std::uint32_t>(outcome.grads.size()));
  for (const HostTensor& g : outcome.grads)
    put_tensor(out, g);
  put<std::uint32_t>(out, static_cast<std::uint32_t>(outcome.hvp.size()));
  for (const HostTensor& h : outcome.hvp)
    put_tensor(out, h);
  return out;
}

std::optional<Outcome> decode_response(const std::string& frame, std::string& note) {
  Reader r(frame);
  if (r.get<std::uint32_t>() != kVersion) return std::nullopt;
  Outcome o;
  const auto status = r.get<std::uint8_t>();
  // Only what a backend in-process can return; a child never reports its own crash.
  if (status > static_cast<std::uint8_t>(Status::Unsupported)) return std::nullopt;
  o.status = static_cast<Status>(status);
  o.error_possible = r.get<std::uint8_t>() != 0;
  o.message = r.get_string();
  note = r.get_string();
  o.root = r.get_tensor();
  o.tangent = r.get_tensor();
  const auto grads = r.get<std::uint32_t>();
  if (grads > kMaxFrame / 16) return std::nullopt;
  for (std::uint32_t i = 0; i < grads; ++i)
    o.grads.push_back(r.get_tensor());
  const auto hvps = r.get<std::uint32_t>();
  if (hvps > kMaxFrame / 16) return std::nullopt;
  for (std::uint32_t i = 0; i < hvps; ++i)
    o.hvp.push_back(r.get_tensor());
  if (!r.done()) return std::nullopt;
  return o;
}

IoResult write_frame(int fd, const std::string& frame) {
  std::string out;
  put<std::uint32_t>(out, static_cast<std::uint32_t>(frame.size()));
  out += frame;
  std::size_t sent = 0;
  while (sent < out.size()) {
    const ssize_t n = ::send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno == EPIPE || errno == ECONNRESET ? IoResult::Closed : IoResult::Failed;
    sent += static_cast<std::size_t>(n);
  }
  return IoResult::Ok;
}

namespace {

IoResult read_exactly(int fd, char* buf, std::size_t size,
                      std::optional<std::chrono::steady_clock::time_point> deadline) {
  std::size_t got = 0;
  while (got < size) {
    int timeout_ms = -1;
    if (deadline) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          *deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return IoResult::TimedOut;
      timeout_ms = static_cast<int>(std::min<long long>(left.count(), 1 << 30));
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return IoResult::Failed;
    if (ready == 0) return IoResult::TimedOut;
    const ssize_t n = ::recv(fd, buf + got, size - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return IoResult::Closed;
    if (n < 0) return IoResult::Failed;
    got += static_cast<std::size_t>(n);
  }
  return IoResult::Ok;
}

} // namespace

IoResult wait_readable(int fd, std::chrono::steady_clock::time_point until) {
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return IoResult::TimedOut;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    return ready == 0 ? IoResult::TimedOut : IoResult::Ok;
  }
}

IoResult read_frame(int fd, std::string& frame,
                    std::optional<std::chrono::steady_clock::time_point> deadline) {
  std::uint32_t size = 0;
  IoResult r = read_exactly(fd, reinterpret_cast<char*>(&size), sizeof size, deadline);
  if (r != IoResult::Ok) return r;
  if (size > kMaxFrame) return IoResult::Failed;
  frame.resize(size);
  return read_exactly(fd, frame.data(), size, deadline);
}

} // namespace burnmark::wire
