// The byte-level format of generator choices: a reader that decodes choices from the front of
// the fuzzer's bytes, and a writer that emits the very same choices, so that encode() is the
// exact inverse of generate() for everything the generator can produce.
#pragma once

#include <cassert>
#include <cstdint>
#include <span>
#include <vector>

namespace burnmark::gen_detail {

// Never fails: past the end every read returns 0, like libFuzzer's FuzzedDataProvider, so that
// decoding is total. Choices are read from the front so the encoder can write them in order.
class ByteReader {
public:
  explicit ByteReader(std::span<const std::uint8_t> bytes)
      : pos_(bytes.data()), end_(bytes.data() + bytes.size()) {}

  bool empty() const { return pos_ == end_; }

  std::uint8_t byte() { return pos_ == end_ ? 0 : *pos_++; }

  // One of n alternatives (0..n-1). A single alternative consumes nothing, so that forced
  // choices cost no input; above 256 alternatives two little-endian bytes are read.
  std::uint32_t choice(std::uint32_t n) {
    if (n <= 1) return 0;
    if (n <= 256) return byte() % n;
    const std::uint32_t low = byte();
    return (low | static_cast<std::uint32_t>(byte()) << 8) % n;
  }

  std::uint32_t u32_le() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
      v |= static_cast<std::uint32_t>(byte()) << (8 * i);
    return v;
  }

  std::uint64_t u64_le() {
    const std::uint64_t low = u32_le();
    return low | static_cast<std::uint64_t>(u32_le()) << 32;
  }

private:
  const std::uint8_t* pos_;
  const std::uint8_t* end_;
};

// Writes exactly the bytes ByteReader consumes for the same sequence of choices.
class ByteWriter {
public:
  void byte(std::uint8_t b) { out_.push_back(b); }

  void choice(std::uint32_t value, std::uint32_t n) {
    assert(value < n && n <= 65536);
    if (n <= 1) return;
    if (n <= 256) {
      byte(static_cast<std::uint8_t>(value));
      return;
    }
    byte(static_cast<std::uint8_t>(value & 0xff));
    byte(static_cast<std::uint8_t>(value >> 8));
  }

  void u32_le(std::uint32_t v) {
    for (int i = 0; i < 4; ++i)
      byte(static_cast<std::uint8_t>(v >> (8 * i)));
  }

  void u64_le(std::uint64_t v) {
    u32_le(static_cast<std::uint32_t>(v));
    u32_le(static_cast<std::uint32_t>(v >> 32));
  }

  std::vector<std::uint8_t> take() { return std::move(out_); }

private:
  std::vector<std::uint8_t> out_;
};

} // namespace burnmark::gen_detail
