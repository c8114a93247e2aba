// .npy reading and writing: round trips, byte-identity with np.save, and every error message.
#include "model/npy.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

#include "model/random.hpp"
#include "tests/model/model_test_support.hpp"
#include "traces/error.hpp"

namespace ranklab {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A hand-made .npy: magic, version, header length (2 or 4 bytes), header, data.
void write_raw_npy(const fs::path& path, const std::string& header, const std::string& data,
                   int major = 1, const std::string& magic = "\x93NUMPY") {
  std::string bytes = magic;
  bytes.push_back(static_cast<char>(major));
  bytes.push_back('\0');
  const std::size_t length = header.size();
  const int width = major == 1 ? 2 : 4;
  for (int k = 0; k < width; ++k) bytes.push_back(static_cast<char>((length >> (8 * k)) & 0xff));
  bytes += header;
  bytes += data;
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string header_for(const std::string& descr, const std::string& shape,
                       const std::string& fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }\n";
}

//! Matrices, vectors and integer arrays survive write + read bit for bit, with their shape
//! and dtype; [B,S,H] data reads as a [B*S, H] matrix.
TEST(NpyTest, RoundTrip) {
  TempDir dir("npy_roundtrip");
  const Matrix<float> m = random_normal_matrix<float>(6, 4, 1, 1.0);
  const std::int64_t bsh[] = {2, 3, 4};
  write_npy_matrix<float>(dir.path() / "m.npy", m, bsh);
  EXPECT_EQ(read_npy_matrix<float>(dir.path() / "m.npy", bsh), m);
  const NpyArray raw = read_npy(dir.path() / "m.npy");
  EXPECT_EQ(raw.dtype, DataType::f32);
  EXPECT_EQ(raw.shape, (std::vector<std::int64_t>{2, 3, 4}));
  EXPECT_EQ(raw.element_count(), 24);
  EXPECT_EQ(raw.data.size(), 96u);

  const Vector<double> v = random_normal_vector<double>(5, 2, 1.0);
  write_npy_vector<double>(dir.path() / "v.npy", v);
  EXPECT_EQ(read_npy_vector<double>(dir.path() / "v.npy", 5), v);

  const std::vector<std::int64_t> longs = {-1, 0, 1LL << 40};
  const std::int64_t three[] = {3};
  write_npy<std::int64_t>(dir.path() / "i8.npy", three, longs);
  EXPECT_EQ(read_npy_values<std::int64_t>(dir.path() / "i8.npy", three), longs);
  const std::vector<std::int32_t> ints = {7, -7};
  const std::int64_t one_by_two[] = {1, 2};
  write_npy<std::int32_t>(dir.path() / "i4.npy", one_by_two, ints);
  EXPECT_EQ(read_npy_values<std::int32_t>(dir.path() / "i4.npy", one_by_two), ints);
  EXPECT_EQ(read_npy(dir.path() / "i4.npy").dtype, DataType::i32);

  // A 0-d array holds one element.
  write_npy<double>(dir.path() / "scalar.npy", {}, std::vector<double>{2.5});
  EXPECT_EQ(read_npy_values<double>(dir.path() / "scalar.npy", {}), std::vector<double>{2.5});
}

// The arrays both sides write: the same values (exact in binary, so no rounding can differ),
// dtypes and shapes, 0-d to 4-d.
struct NumpyCase {
  const char* name;
  const char* dtype;  // NumPy's name
  std::vector<std::int64_t> shape;
};
const std::vector<NumpyCase>& numpy_cases() {
  static const std::vector<NumpyCase> cases = {
      {"scalar_f64", "float64", {}},           {"vector_f32", "float32", {7}},
      {"matrix_f32", "float32", {64, 32}},     {"bsh_f64", "float64", {2, 3, 5}},
      {"wide_f64", "float64", {1, 2, 3, 4}},   {"ints_i32", "int32", {3, 4}},
      {"longs_i64", "int64", {5}},             {"empty_f32", "float32", {0, 3}},
  };
  return cases;
}

// Element k of every case: (k - 50) / 4, and for the 64-bit integers k * 2^33 - 7.
template <typename T>
std::vector<T> case_values(std::int64_t count) {
  std::vector<T> values;
  for (std::int64_t k = 0; k < count; ++k) {
    if constexpr (std::is_same_v<T, std::int64_t>) {
      values.push_back(k * (std::int64_t{1} << 33) - 7);
    } else {
      values.push_back(static_cast<T>(static_cast<double>(k - 50) / 4.0));
    }
  }
  return values;
}

// Runs NumPy (Debian's python3-numpy under /usr/bin/python3, as scripts/setup.sh installs
// it): np.save of every case into `theirs`, and np.load of every file of `ours` checked
// against the same values. Returns the shell's exit status (0: NumPy agreed).
int run_numpy(const fs::path& ours, const fs::path& theirs) {
  std::string program =
      "import sys, numpy as np\n"
      "ours, theirs = sys.argv[1], sys.argv[2]\n"
      "for name, dtype, shape in [";
  for (const NumpyCase& c : numpy_cases()) {
    program += "('" + std::string(c.name) + "', '" + c.dtype + "', (";
    for (std::int64_t n : c.shape) program += std::to_string(n) + ",";
    program += ")),";
  }
  program +=
      "]:\n"
      "    k = np.arange(int(np.prod(shape)), dtype=np.int64)\n"
      "    values = k * 2**33 - 7 if dtype == 'int64' else (k - 50) / 4\n"
      "    expected = values.astype(dtype).reshape(shape)\n"
      "    np.save(f'{theirs}/{name}.npy', expected)\n"
      "    read = np.load(f'{ours}/{name}.npy')\n"
      "    assert read.dtype == expected.dtype and read.shape == expected.shape, name\n"
      "    assert np.array_equal(read, expected), name\n";
  const fs::path script = theirs / "check.py";
  std::ofstream(script) << program;
  const std::string command = "/usr/bin/python3 '" + script.string() + "' '" + ours.string() +
                              "' '" + theirs.string() + "'";
  return std::system(command.c_str());
}

//! What write_npy writes is byte-identical to what NumPy's np.save writes for the same
//! array, and NumPy reads it back as that array (dtype, shape, values), for every dtype
//! ranklab writes and 0-d to 4-d shapes. Needs python3-numpy (scripts/setup.sh installs it):
//! without it the test fails, it does not skip.
TEST(NpyTest, WritesWhatNumpyWrites) {
  TempDir ours("npy_ours");
  TempDir theirs("npy_numpy");
  for (const NumpyCase& c : numpy_cases()) {
    std::int64_t count = 1;
    for (std::int64_t n : c.shape) count *= n;
    const fs::path path = ours.path() / (std::string(c.name) + ".npy");
    const std::string dtype = c.dtype;
    if (dtype == "float32") write_npy<float>(path, c.shape, case_values<float>(count));
    if (dtype == "float64") write_npy<double>(path, c.shape, case_values<double>(count));
    if (dtype == "int32") write_npy<std::int32_t>(path, c.shape, case_values<std::int32_t>(count));
    if (dtype == "int64") write_npy<std::int64_t>(path, c.shape, case_values<std::int64_t>(count));
  }
  ASSERT_EQ(run_numpy(ours.path(), theirs.path()), 0)
      << "NumPy could not check the files (is python3-numpy installed for /usr/bin/python3? "
         "scripts/setup.sh installs it)";
  for (const NumpyCase& c : numpy_cases()) {
    const std::string file = std::string(c.name) + ".npy";
    EXPECT_EQ(read_bytes(ours.path() / file), read_bytes(theirs.path() / file)) << file;
  }
}

//! Format 2.0 (4-byte header length) and Python 2 style 'L' dimensions are read.
TEST(NpyTest, ReadsVersion2) {
  TempDir dir("npy_v2");
  const std::string data(16, '\0');
  write_raw_npy(dir.path() / "v2.npy", header_for("<f8", "(2L,)"), data, 2);
  const std::int64_t two[] = {2};
  EXPECT_EQ(read_npy_values<double>(dir.path() / "v2.npy", two), (std::vector<double>{0.0, 0.0}));
}

//! Each problem with a file gives a TraceError "PATH: reason" (a wrong value count, the
//! caller's mistake, a UsageError).
TEST(NpyTest, ErrorsNameThePathAndTheReason) {
  TempDir dir("npy_errors");
  const auto at = [&](const char* name) { return dir.path() / name; };
  const std::int64_t shape_64_32[] = {64, 32};
  const std::string floats_64_32(64 * 32 * 4, '\0');
  const std::string path = at("layer0.w1.f32.npy").string();

  write_raw_npy(at("layer0.w1.f32.npy"), header_for(">f8", "(64, 32)"), std::string(16384, '\0'));
  EXPECT_THROW_MSG(read_npy_values<float>(at("layer0.w1.f32.npy"), shape_64_32), TraceError,
                   path + ": expected dtype <f4, found >f8");
  EXPECT_THROW_MSG(read_npy(at("layer0.w1.f32.npy")), TraceError, path + ": unsupported dtype >f8");

  write_raw_npy(at("fortran.npy"), header_for("<f4", "(64, 32)", "True"), floats_64_32);
  EXPECT_THROW_MSG(read_npy_values<float>(at("fortran.npy"), shape_64_32), TraceError,
                   "fortran.npy: fortran_order arrays are not supported");
  EXPECT_THROW_MSG(read_npy(at("fortran.npy")), TraceError,
                   "fortran_order arrays are not supported");

  write_raw_npy(at("transposed.npy"), header_for("<f4", "(32, 64)"), floats_64_32);
  EXPECT_THROW_MSG(read_npy_matrix<float>(at("transposed.npy"), shape_64_32), TraceError,
                   "transposed.npy: expected shape [64,32], found [32,64]");

  write_raw_npy(at("short.npy"), header_for("<f4", "(64, 32)"), std::string(100, '\0'));
  EXPECT_THROW_MSG(read_npy_values<float>(at("short.npy"), shape_64_32), TraceError,
                   "short.npy: file is truncated (expected 8192 data bytes, found 100)");

  write_raw_npy(at("long.npy"), header_for("<f4", "(64, 32)"), floats_64_32 + "xyz");
  EXPECT_THROW_MSG(read_npy(at("long.npy")), TraceError,
                   "long.npy: file has 3 bytes after the data");

  write_raw_npy(at("magic.npy"), header_for("<f4", "(1,)"), "abcd", 1, "\x93NUMPX");
  EXPECT_THROW_MSG(read_npy(at("magic.npy")), TraceError,
                   "magic.npy: not a .npy file (bad magic string)");

  write_raw_npy(at("v3.npy"), header_for("<f4", "(1,)"), "abcd", 3);
  EXPECT_THROW_MSG(read_npy(at("v3.npy")), TraceError,
                   "v3.npy: unsupported .npy format version 3.0 (reads 1.0 and 2.0)");

  write_raw_npy(at("noshape.npy"), "{'descr': '<f4', 'fortran_order': False, }\n", "abcd");
  EXPECT_THROW_MSG(read_npy(at("noshape.npy")), TraceError,
                   "noshape.npy: malformed header: no 'shape' key");

  write_raw_npy(at("garbled.npy"), "{'descr': '<f4', 'fortran_order': Nope, 'shape': (1,), }\n",
                "abcd");
  EXPECT_THROW_MSG(read_npy(at("garbled.npy")), TraceError,
                   "garbled.npy: malformed header: expected True or False");

  std::ofstream(at("tiny.npy"), std::ios::binary) << std::string("\x93NUMPY\x01", 7);
  EXPECT_THROW_MSG(read_npy(at("tiny.npy")), TraceError, "tiny.npy: file is truncated (no header)");

  EXPECT_THROW_MSG(read_npy(at("absent.npy")), TraceError, "absent.npy: no such file");
  EXPECT_THROW_MSG(read_npy(dir.path()), TraceError, ": not a regular file");

  const std::int64_t three[] = {3};
  EXPECT_THROW_MSG(write_npy<float>(at("bad.npy"), three, std::vector<float>{1, 2}), UsageError,
                   "bad.npy: cannot write shape [3] from 2 values");
  EXPECT_THROW_MSG(
      write_npy<float>(dir.path() / "no" / "dir.npy", three, std::vector<float>{1, 2, 3}),
      TraceError, "dir.npy: cannot write the array (No such file or directory)");
}

}  // namespace
}  // namespace ranklab
