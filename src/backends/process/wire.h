// The child backend's wire format: length-prefixed frames on one socket. A request is the
// program's text form (which round-trips every bit) and the run options; a response is the
// whole Outcome, doubles as their bytes. Both ends are the same build, so the format carries a
// version only to catch a stale server binary.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "burnmark/driver/driver.h"

namespace burnmark::wire {

struct Request {
  std::string program_text;
  bool gradients = true;
  bool tangents = false;
  bool hessian = false;
};

std::string encode_request(const Request& request);
std::optional<Request> decode_request(const std::string& frame);

// `note` is the inner backend's note() after the run.
std::string encode_response(const Outcome& outcome, const std::string& note);
std::optional<Outcome> decode_response(const std::string& frame, std::string& note);

// The child's first frame, once its backend is built: this prefix, then its backend's
// platform() (which kernels the child's library chose, under the child's environment).
inline const std::string kReadyPrefix = "burnmark child ready v2; platform: ";

// Or, instead of being ready, why the child cannot serve (a Python child that cannot import its
// framework): this prefix, then one line the parent reports.
inline const std::string kFailedPrefix = "burnmark child failed: ";

enum class IoResult { Ok, Closed, TimedOut, Failed };

// A frame is a u32 length then the bytes. Writes never raise SIGPIPE (the peer may be dead).
IoResult write_frame(int fd, const std::string& frame);
// Blocks until a whole frame arrived, the peer closed the socket, or the deadline passed
// (nullopt: no deadline).
IoResult read_frame(int fd, std::string& frame,
                    std::optional<std::chrono::steady_clock::time_point> deadline);
// Ok once there is something to read (or the peer closed: read_frame then says so), TimedOut
// when `until` passed first.
IoResult wait_readable(int fd, std::chrono::steady_clock::time_point until);

} // namespace burnmark::wire
