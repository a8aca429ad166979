// SPDX-License-Identifier: MIT
// Findings of the review after issue 9, raw ioctls and sysfs:
//  - a stream that does not stop at shutdown (INJ_QUIESCE "streams",
//    debugfs inject_quiesce): removal turns bus mastering off, says so,
//    and resets the function before letting go; the device binds again,
//    was reset before use and runs jobs;
//  - a hard reset that fails (INJ_QUIESCE "hard_reset"): the device is
//    unusable, its memory stays out of use (bus mastering off), the log says
//    so; removal resets the function; the device binds again and works, and
//    no HBM leaked;
//  - an FLR with the driver bound (sysfs reset, reset_method flr): the
//    driver has quiesced and recovered by the time the reset returns;
//  - users without CAP_SYS_ADMIN together hold at most
//    limits/unprivileged_contexts contexts, whatever their uids: root still
//    opens;
//  - the usage counters in limits/ are for root only.
//
// Copyright (c) 2026 The hpu authors
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "err_util.h"
#include "vm_util.h"

using namespace vmt;

namespace {

constexpr const char *kDrv = "/sys/bus/pci/drivers/hpu";
constexpr std::uint32_t kForeverSob = 29; // no test sets it

std::string pci(const std::string &bdf) { return "/sys/bus/pci/devices/" + bdf; }

std::string trim(std::string s)
{
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
        s.pop_back();
    return s;
}

bool is_bound(const std::string &bdf) { return ::access((std::string(kDrv) + "/" + bdf).c_str(), F_OK) == 0; }

std::string accel_node(const std::string &bdf)
{
    std::string n;
    if (DIR *d = ::opendir((pci(bdf) + "/accel").c_str())) {
        while (const dirent *e = ::readdir(d)) {
            if (std::strncmp(e->d_name, "accel", 5) == 0)
                n = std::string("/dev/accel/") + e->d_name;
        }
        ::closedir(d);
    }
    return n;
}

// Binds the device again when the test leaves it unbound, whatever happens.
struct BindGuard {
    std::string bdf;
    explicit BindGuard(std::string b) : bdf(std::move(b)) {}
    BindGuard(const BindGuard &) = delete;
    BindGuard &operator=(const BindGuard &) = delete;
    BindGuard(BindGuard &&) = delete;
    BindGuard &operator=(BindGuard &&) = delete;
    ~BindGuard()
    {
        if (!is_bound(bdf))
            write_text(std::string(kDrv) + "/bind", bdf);
    }
};

// Puts a device's reset_method back.
struct MethodGuard {
    std::string bdf;
    std::string method;
    MethodGuard(std::string b, std::string m) : bdf(std::move(b)), method(std::move(m)) {}
    MethodGuard(const MethodGuard &) = delete;
    MethodGuard &operator=(const MethodGuard &) = delete;
    MethodGuard(MethodGuard &&) = delete;
    MethodGuard &operator=(MethodGuard &&) = delete;
    ~MethodGuard()
    {
        if (!method.empty())
            write_text(pci(bdf) + "/reset_method", method);
    }
};

// The kernel log from the moment of construction, read through /dev/kmsg.
class KmsgTail {
public:
    KmsgTail() : fd_(::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC)) // NOLINT(cppcoreguidelines-pro-type-vararg)
    {
        REQUIRE(fd_ >= 0);
        REQUIRE(::lseek(fd_, 0, SEEK_END) >= 0);
    }
    KmsgTail(const KmsgTail &) = delete;
    KmsgTail &operator=(const KmsgTail &) = delete;
    KmsgTail(KmsgTail &&) = delete;
    KmsgTail &operator=(KmsgTail &&) = delete;
    ~KmsgTail() { ::close(fd_); }
    // Every message text logged since construction (or the last call), one a line.
    std::string read_new()
    {
        std::string out;
        std::array<char, 8192> rec{};
        for (;;) {
            const ssize_t n = ::read(fd_, rec.data(), rec.size() - 1);
            if (n < 0 && errno == EPIPE)
                continue; // overwritten records: skip ahead
            if (n <= 0)
                break;
            const std::string r(rec.data(), static_cast<std::size_t>(n));
            const auto semi = r.find(';');
            const auto nl = r.find('\n');
            if (semi != std::string::npos && nl != std::string::npos && nl > semi)
                out += r.substr(semi + 1, nl - semi - 1) + "\n";
        }
        return out;
    }

private:
    int fd_;
};

// PCI_COMMAND of a device, from its configuration space.
std::uint16_t pci_command(const std::string &bdf)
{
    const int fd = ::open((pci(bdf) + "/config").c_str(), O_RDONLY | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
    REQUIRE(fd >= 0);
    std::array<unsigned char, 2> b{};
    const ssize_t n = ::pread(fd, b.data(), b.size(), 4);
    ::close(fd);
    REQUIRE(n == 2);
    return static_cast<std::uint16_t>(b[0] | (b[1] << 8));
}
constexpr std::uint16_t kPciCommandMaster = 0x4;

// The device (last bound HPU) works: a job copies within HBM.
void device_works(const std::string &bdf)
{
    REQUIRE(is_bound(bdf));
    const std::string n = accel_node(bdf);
    REQUIRE(!n.empty());
    Ctx c(n);
    std::uint32_t q = 0;
    REQUIRE(c.queue_create(0, q) == 0);
    const std::uint64_t hbm = c.hbm_buf(kHbmPage);
    CHECK(c.run(q, Cb().lin_dma(hbm, hbm + kHbmPage / 2, 4096)) == 1);
}

std::string last_bdf()
{
    const auto devs = nodes_by_pci();
    REQUIRE(!devs.empty());
    return devs.back().pci_addr;
}

std::string limits_dir(const std::string &node) { return sysfs_dir(node) + "/limits/"; }

// Sets a limit for the scope of a test and puts the old value back.
class LimitSet {
public:
    LimitSet(std::string node, std::string name, std::uint64_t value) : node_(std::move(node)), name_(std::move(name))
    {
        const auto v = read_u64(limits_dir(node_) + name_);
        REQUIRE(v.has_value());
        old_ = *v;
        REQUIRE(write_text(limits_dir(node_) + name_, std::to_string(value)) == 0);
    }
    LimitSet(const LimitSet &) = delete;
    LimitSet &operator=(const LimitSet &) = delete;
    LimitSet(LimitSet &&) = delete;
    LimitSet &operator=(LimitSet &&) = delete;
    ~LimitSet() { (void)write_text(limits_dir(node_) + name_, std::to_string(old_)); }

private:
    std::string node_;
    std::string name_;
    std::uint64_t old_ = 0;
};

// chmod for the scope of a test.
class ModeGuard {
public:
    ModeGuard(std::string path, mode_t mode) : path_(std::move(path))
    {
        struct stat st{};
        REQUIRE(::stat(path_.c_str(), &st) == 0);
        old_ = st.st_mode & 07777;
        REQUIRE(::chmod(path_.c_str(), mode) == 0);
    }
    ModeGuard(const ModeGuard &) = delete;
    ModeGuard &operator=(const ModeGuard &) = delete;
    ModeGuard(ModeGuard &&) = delete;
    ModeGuard &operator=(ModeGuard &&) = delete;
    ~ModeGuard() { (void)::chmod(path_.c_str(), old_); }

private:
    std::string path_;
    mode_t old_ = 0600;
};

// A process of `uid` that opens the device until refused and holds its
// files until destroyed.
class Opener {
public:
    Opener(const std::string &path, int uid)
    {
        REQUIRE(::pipe(up_.data()) == 0);
        REQUIRE(::pipe(down_.data()) == 0);
        pid_ = ::fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0)
            child(path, uid);
        ::close(up_[1]);
        ::close(down_[0]);
        REQUIRE(::read(up_[0], res_.data(), sizeof(res_)) == sizeof(res_));
    }
    Opener(const Opener &) = delete;
    Opener &operator=(const Opener &) = delete;
    Opener(Opener &&) = delete;
    Opener &operator=(Opener &&) = delete;
    ~Opener()
    {
        const char go = 'x';
        (void)!::write(down_[1], &go, 1);
        int st = 0;
        (void)::waitpid(pid_, &st, 0);
        ::close(up_[0]);
        ::close(down_[1]);
    }
    [[nodiscard]] int opened() const { return res_[0]; }
    [[nodiscard]] int refused_errno() const { return res_[1]; }

private:
    [[noreturn]] void child(const std::string &path, int uid)
    {
        ::close(up_[0]);
        ::close(down_[1]);
        std::array<int, 2> r{0, 0};
        std::vector<int> fds;
        if (::setgid(static_cast<gid_t>(uid)) == 0 && ::setuid(static_cast<uid_t>(uid)) == 0) {
            for (int i = 0; i < 64; ++i) {
                const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
                if (fd < 0) {
                    r[1] = errno;
                    break;
                }
                fds.push_back(fd);
            }
            r[0] = static_cast<int>(fds.size());
        }
        (void)!::write(up_[1], r.data(), sizeof(r));
        char c = 0;
        (void)!::read(down_[0], &c, 1);
        ::_exit(0);
    }
    std::array<int, 2> up_{};
    std::array<int, 2> down_{};
    pid_t pid_ = -1;
    std::array<int, 2> res_{-1, -1};
};

} // namespace

TEST_CASE("a stream that does not stop at shutdown: bus mastering off, the removal resets the function, "
          "the device works after rebind",
          "[security]")
{
    const std::string bdf = last_bdf();
    const BindGuard guard(bdf);
    const std::string path = accel_node(bdf);
    REQUIRE(!path.empty());
    KmsgTail klog;

    inject(path, "inject_quiesce", "streams");
    REQUIRE(write_text(std::string(kDrv) + "/unbind", bdf) == 0);
    REQUIRE(!is_bound(bdf));
    // Nothing the device does reaches memory after the unbind.
    CHECK((pci_command(bdf) & kPciCommandMaster) == 0);

    const std::string log = klog.read_new();
    INFO("kernel log:\n" << log);
    CHECK(std::regex_search(log, std::regex("[0-9]+ streams did not stop at shutdown: bus mastering turned off "
                                            "before their jobs fail")));
    CHECK(log.find("device not quiesced: function reset at removal, bus mastering off") != std::string::npos);

    const int e = write_text(std::string(kDrv) + "/bind", bdf);
    INFO("bind " << bdf << ": " << std::strerror(e));
    REQUIRE(e == 0);
    // The device was reset before the new instance used it.
    const auto inj = read_text(debugfs_dir(accel_node(bdf)) + "/inject_quiesce");
    REQUIRE(inj.has_value());
    CHECK(*inj == "0x0\n");
    device_works(bdf);
}

TEST_CASE("a hard reset that fails: the device is unusable and off the bus, the removal resets the function, "
          "the device works after rebind",
          "[security]")
{
    const std::string bdf = last_bdf();
    const BindGuard guard(bdf);
    const std::string path = accel_node(bdf);
    REQUIRE(!path.empty());
    const std::uint64_t hbm_used0 = memory_now(path).hbm_used;
    KmsgTail klog;

    {
        Ctx c(path);
        std::uint32_t q = 0;
        REQUIRE(c.queue_create(0, q) == 0);
        const std::uint64_t hbm = c.hbm_buf(kHbmPage);
        (void)hbm;
        // A job on the stream when the reset fails.
        const Cb forever = Cb().wait(kForeverSob, 1);
        const std::uint64_t cb_va = c.put_cb(forever);
        std::uint32_t so = 0;
        REQUIRE(syncobj_create(c.fd(), so) == 0);
        REQUIRE(c.submit(q, cb_va, forever.bytes(), so, {}, 0) == 0);

        inject(path, "inject_quiesce", "hard_reset");
        const int re = write_text(reset_attr(path), "hard");
        INFO("hard reset: " << std::strerror(re));
        CHECK(re != 0);

        // Its fence signalled with an error; the device is gone for users.
        CHECK(syncobj_wait(c.fd(), so, 10ULL * 1000000000ULL) == 0);
        std::uint32_t q2 = 0;
        CHECK(c.queue_create(0, q2) == ENODEV);
        CHECK(::access(path.c_str(), F_OK) != 0);
    }
    CHECK((pci_command(bdf) & kPciCommandMaster) == 0);

    REQUIRE(write_text(std::string(kDrv) + "/unbind", bdf) == 0);
    const std::string log = klog.read_new();
    INFO("kernel log:\n" << log);
    CHECK(std::regex_search(log, std::regex("hard reset failed \\(-?[0-9]+\\): the device is unusable")));
    CHECK(log.find("bus mastering turned off: the device may still run; its memory stays out of use until it is "
                   "unbound") != std::string::npos);
    CHECK(log.find("device not quiesced: function reset at removal, bus mastering off") != std::string::npos);

    const int e = write_text(std::string(kDrv) + "/bind", bdf);
    INFO("bind " << bdf << ": " << std::strerror(e));
    REQUIRE(e == 0);
    REQUIRE(is_bound(bdf));
    const auto inj = read_text(debugfs_dir(accel_node(bdf)) + "/inject_quiesce");
    REQUIRE(inj.has_value());
    CHECK(*inj == "0x0\n");
    device_works(bdf);
    CHECK(wait_hbm_used(accel_node(bdf), hbm_used0) == hbm_used0);
}

TEST_CASE("FLR with the driver bound: the driver has recovered when the reset returns", "[security]")
{
    const std::string bdf = last_bdf();
    const std::string methods = trim(read_text(pci(bdf) + "/reset_method").value_or(""));
    REQUIRE(methods.find("flr") != std::string::npos);
    const MethodGuard mguard(bdf, methods);
    const std::string path = accel_node(bdf);
    REQUIRE(!path.empty());
    const std::uint64_t hard0 = errors_now(path).hard_resets;
    const std::uint64_t gen0 = errors_now(path).reset_generation;
    KmsgTail klog;

    REQUIRE(write_text(pci(bdf) + "/reset_method", "flr") == 0);
    REQUIRE(write_text(pci(bdf) + "/reset", "1") == 0);

    // No waiting: the reset returned once the driver was done.
    const drm_hpu_info_errors after = errors_now(path);
    CHECK(after.hard_resets == hard0 + 1);
    CHECK(after.reset_generation == gen0 + 1);
    CHECK(trim(read_text(pci(bdf) + "/status").value_or("")) == "operational");
    device_works(bdf);
    const std::string log = klog.read_new();
    INFO("kernel log:\n" << log);
    CHECK(log.find("hard reset: function level reset; every context is lost") != std::string::npos);
    CHECK(log.find("heartbeat lost") == std::string::npos);
}

TEST_CASE("contexts: users without CAP_SYS_ADMIN together hold at most unprivileged_contexts, root still opens",
          "[security]")
{
    const std::string path = node(0);
    const ModeGuard mode(path, 0666);
    const auto dflt = read_u64(limits_dir(path) + "unprivileged_contexts");
    REQUIRE(dflt.has_value());
    CHECK(*dflt == 59);
    const std::uint64_t per_user = read_u64(limits_dir(path) + "user_contexts").value_or(32);
    {
        // Two uids at their per-user limit would take every ASID but one.
        const LimitSet lim(path, "user_contexts", 40);
        const Opener a(path, 65534);
        const Opener b(path, 65533);
        INFO("uid 65534 opened " << a.opened() << ", uid 65533 " << b.opened());
        CHECK(a.opened() == 40);
        CHECK(b.opened() == 19);
        CHECK(b.refused_errno() == EBUSY);
        // Root still opens, and a third uid does not.
        std::vector<std::unique_ptr<Ctx>> root;
        for (int i = 0; i < 4; ++i)
            root.push_back(std::make_unique<Ctx>(path));
        const Opener c(path, 65532);
        CHECK(c.opened() == 0);
        CHECK(c.refused_errno() == EBUSY);
    }
    {
        const LimitSet lim(path, "unprivileged_contexts", 3);
        const Opener a(path, 65534);
        const Opener b(path, 65533);
        CHECK(a.opened() == 3);
        CHECK(b.opened() == 0);
        CHECK(b.refused_errno() == EBUSY);
    }
    CHECK(read_u64(limits_dir(path) + "user_contexts") == per_user);
    CHECK(write_text(limits_dir(path) + "unprivileged_contexts", "0") == EINVAL);
    CHECK(write_text(limits_dir(path) + "unprivileged_contexts", "64") == EINVAL);
    CHECK(read_u64(limits_dir(path) + "unprivileged_contexts") == dflt);
}

TEST_CASE("limits: usage counters are for root only, the limits for everyone", "[security]")
{
    const std::string dir = limits_dir(node(0));
    REQUIRE(read_u64(dir + "page_tables_used").has_value());
    REQUIRE(read_u64(dir + "jobs").has_value());
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        int rc = 0;
        if (::setgid(65534) != 0 || ::setuid(65534) != 0)
            ::_exit(0x40);
        for (const char *n : {"page_tables_used", "jobs"}) {
            const int fd = ::open((dir + n).c_str(), O_RDONLY | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
            if (fd >= 0 || errno != EACCES)
                rc |= 1;
            if (fd >= 0)
                ::close(fd);
        }
        for (const char *n : {"user_contexts", "unprivileged_contexts", "ctx_jobs", "page_tables"}) {
            if (!read_u64(dir + n))
                rc |= 2;
        }
        ::_exit(rc);
    }
    int st = 0;
    REQUIRE(::waitpid(pid, &st, 0) == pid);
    REQUIRE(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 0);
}
