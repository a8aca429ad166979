// SPDX-License-Identifier: MIT
// The real OS layer on the host's own files (no HPU needed).
//
// Copyright (c) 2026 The hpu authors
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <poll.h>

#include <catch2/catch_test_macros.hpp>

#include "drm/hpu_accel.h"
#include "hpu/hpu.h"
#include "os.h"

namespace fs = std::filesystem;

namespace {
struct TempDir {
    fs::path path;
    TempDir()
    {
        std::string tmpl = (fs::temp_directory_path() / "hpu-test-XXXXXX").string();
        REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
        path = tmpl;
    }
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
    TempDir(TempDir &&) = delete;
    TempDir &operator=(TempDir &&) = delete;
    ~TempDir()
    {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};
} // namespace

TEST_CASE("real OS layer", "[os]")
{
    auto &os = hpu::detail::real_os();
    const TempDir dir;
    {
        std::ofstream(dir.path / "vendor") << "0x1234\n";
    }
    fs::create_directory(dir.path / "sub");
    fs::create_symlink("../../bus/pci/drivers/hpu", dir.path / "driver");

    std::string text;
    REQUIRE(os.read_file((dir.path / "vendor").string(), text) == 0);
    CHECK(text == "0x1234\n");
    CHECK(os.read_file((dir.path / "missing").string(), text) == -ENOENT);
    // read_file_max: the whole file up to the limit, -EFBIG past it.
    {
        std::ofstream(dir.path / "sub" / "big") << std::string(10000, 'x');
    }
    REQUIRE(os.read_file_max((dir.path / "sub" / "big").string(), text, 10000) == 0);
    CHECK(text.size() == 10000);
    CHECK(os.read_file_max((dir.path / "sub" / "big").string(), text, 9999) == -EFBIG);
    CHECK(os.read_file_max((dir.path / "sub" / "big").string(), text, 0) == -EFBIG);
    CHECK(os.read_file_max((dir.path / "missing").string(), text, 10) == -ENOENT);
    CHECK(os.read_file_max(dir.path.string(), text, 10) == -EISDIR);

    std::vector<std::string> names;
    REQUIRE(os.list_dir(dir.path.string(), names) == 0);
    std::sort(names.begin(), names.end());
    CHECK(names == std::vector<std::string>{"driver", "sub", "vendor"});
    CHECK(os.list_dir((dir.path / "missing").string(), names) == -ENOENT);
    CHECK(os.list_dir((dir.path / "vendor").string(), names) == -ENOTDIR);

    std::string target;
    REQUIRE(os.read_link((dir.path / "driver").string(), target) == 0);
    CHECK(target == "../../bus/pci/drivers/hpu");
    CHECK(os.read_link((dir.path / "vendor").string(), target) == -EINVAL);

    CHECK(os.open((dir.path / "missing").string(), O_RDONLY) == -ENOENT);
    const int fd = os.open("/dev/null", O_RDWR);
    REQUIRE(fd >= 0);
    CHECK((::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0); // NOLINT(cppcoreguidelines-pro-type-vararg)
    drm_hpu_info req{};
    CHECK(os.ioctl(fd, DRM_IOCTL_HPU_INFO, &req) == -ENOTTY);
    CHECK(os.close(fd) == 0);
    CHECK(os.close(fd) == -EBADF);
}

TEST_CASE("the real OS is the default and set_default_os restores it", "[os]")
{
    CHECK(&hpu::detail::default_os() == &hpu::detail::real_os());
    CHECK(hpu::detail::set_default_os(nullptr) == nullptr);
    CHECK(&hpu::detail::default_os() == &hpu::detail::real_os());
    // On any machine the real discovery runs without error (0 or more HPUs).
    CHECK(hpu_device_count() >= 0);
}

TEST_CASE("real OS layer: read, write, poll, eventfd, write_file", "[os]")
{
    auto &os = hpu::detail::real_os();
    const TempDir dir;
    const std::string attr = (dir.path / "attr").string();
    {
        std::ofstream(attr) << "old";
    }
    CHECK(os.write_file(attr, "hard\n") == 0);
    std::string text;
    REQUIRE(os.read_file(attr, text) == 0);
    CHECK(text == "hard\n");
    CHECK(os.write_file((dir.path / "missing").string(), "soft\n") == -ENOENT);
    CHECK(os.write_file(dir.path.string(), "soft\n") == -EISDIR);

    const int efd = os.eventfd();
    REQUIRE(efd >= 0);
    CHECK((::fcntl(efd, F_GETFD) & FD_CLOEXEC) != 0); // NOLINT(cppcoreguidelines-pro-type-vararg)
    pollfd p{efd, POLLIN, 0};
    CHECK(os.poll(&p, 1, 0) == 0);
    std::uint64_t v = 0;
    CHECK(os.read(efd, &v, sizeof(v)) == -EAGAIN); // non-blocking
    v = 3;
    CHECK(os.write(efd, &v, sizeof(v)) == 8);
    CHECK(os.poll(&p, 1, -1) == 1);
    CHECK((p.revents & POLLIN) != 0);
    v = 0;
    CHECK(os.read(efd, &v, sizeof(v)) == 8);
    CHECK(v == 3);
    CHECK(os.close(efd) == 0);
    CHECK(os.read(efd, &v, sizeof(v)) == -EBADF);
    CHECK(os.write(efd, &v, sizeof(v)) == -EBADF);
}
