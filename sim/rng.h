// Deterministic random numbers for the simulator. std::mt19937_64's output is
// fixed by the standard, but std::*_distribution is not (libstdc++ and libc++
// differ, and versions may change), so every distribution here is built from
// raw 64-bit draws: the same seed writes the same bytes everywhere.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace reflex::sim {

// SplitMix64: derives independent seeds for sub-streams (incident i, host h).
inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
inline uint64_t derive_seed(uint64_t a, uint64_t b, uint64_t c = 0) {
  return mix64(mix64(mix64(a) ^ (b * 0x632be59bd9b4e019ULL)) ^ (c * 0x8cb92ba72f3d8dd7ULL));
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : eng_(seed) {}

  uint64_t bits() { return eng_(); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(eng_() >> 11) * (1.0 / 9007199254740992.0); }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  // Uniform integer in [lo, hi] (inclusive), rejection sampling: no modulo bias.
  long long range(long long lo, long long hi) {
    if (hi <= lo) return lo;
    uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    uint64_t limit = span == 0 ? 0 : (~uint64_t{0} - (~uint64_t{0} % span));
    uint64_t x;
    do {
      x = eng_();
    } while (limit != 0 && x >= limit);
    return lo + static_cast<long long>(span == 0 ? x : x % span);
  }
  int index(size_t n) { return n == 0 ? 0 : static_cast<int>(range(0, static_cast<int64_t>(n) - 1)); }
  bool chance(double p) { return uniform() < p; }
  // Box-Muller (one value per call; simple beats fast here).
  double normal(double mean, double sd) {
    double u1 = uniform();
    while (u1 <= 1e-300) u1 = uniform();
    double u2 = uniform();
    return mean + sd * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  double exponential(double mean) {
    double u = uniform();
    while (u <= 1e-300) u = uniform();
    return -mean * std::log(u);
  }
  // A delay around `center` seconds: log-normal with the given spread, clamped.
  double around(double center, double spread, double lo, double hi) {
    double v = center * std::exp(normal(0, spread));
    return v < lo ? lo : (v > hi ? hi : v);
  }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(index(v.size()))];
  }
  // Index drawn with the given (non-negative) weights.
  int weighted(const std::vector<double>& w) {
    double total = 0;
    for (double x : w) total += x;
    double r = uniform() * total;
    for (size_t i = 0; i < w.size(); ++i) {
      if (r < w[i]) return static_cast<int>(i);
      r -= w[i];
    }
    return static_cast<int>(w.size()) - 1;
  }
  template <class T>
  void shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[static_cast<size_t>(range(0, static_cast<int64_t>(i) - 1))]);
  }
  std::string hex(int digits) {
    static const char* k = "0123456789abcdef";
    std::string s;
    for (int i = 0; i < digits; ++i) s.push_back(k[eng_() & 15]);
    return s;
  }

 private:
  std::mt19937_64 eng_;
};

}  // namespace reflex::sim
