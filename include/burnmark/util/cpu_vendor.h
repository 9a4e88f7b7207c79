// The CPU vendor's CPUID string ("GenuineIntel", "AuthenticAMD"), part of every backend's
// platform line: approximate instructions (rsqrtps, rcpps) and the libraries' own runtime
// dispatch may round differently on another vendor's processors at the same instruction set.
// Header-only, so that plugins, which link none of BurnMark's libraries, can say it too.
#pragma once

#include <cpuid.h>

#include <cstring>
#include <string>

namespace burnmark {

inline std::string cpu_vendor() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return "unknown";
  char vendor[13] = {};
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  return vendor;
}

} // namespace burnmark
