// SPDX-License-Identifier: MIT
// Per-context and per-user limits (issue 9, defect 6;
// Documentation/driver/limits.md): one tenant cannot take what every other
// tenant needs.
//  - page tables: tenants binding a 2 MiB buffer at every GiB (a fresh page
//    table per bind) are refused (ENOSPC at their own limit, ENOMEM once the
//    shared part of the area is gone) while another context and another
//    process still open, bind, create queues and run jobs; root's
//    ctx_page_tables moves the point of refusal;
//  - mappings: ctx_mappings refuses the offender with ENOSPC, and the
//    mapping structures are charged to the caller's memory cgroup;
//  - queues (ENOSPC) and jobs in flight (EBUSY) per context;
//  - a caller without CAP_SYS_ADMIN gets EINVAL for a timeout above
//    user_timeout_ms, root may go up to 3600000;
//  - one user id may hold user_contexts open files (EBUSY beyond), others
//    and root still open;
//  - the knobs are root's, range checked; nothing is left behind (page
//    tables, jobs, HBM).
//
// Copyright (c) 2026 The hpu authors
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include "err_util.h"
#include "vm_util.h"

using namespace vmt;

namespace {

std::string limits_dir(const std::string &node) { return sysfs_dir(node) + "/limits/"; }

// The limits directory exists (the driver has the limits).
bool have_limits(const std::string &node) { return read_u64(limits_dir(node) + "page_tables").has_value(); }

// A limit, or its documented default where the driver has none (so that a
// test shows the old driver's behaviour before it needs the knobs).
std::uint64_t limit_or(const std::string &node, const std::string &name, std::uint64_t dflt)
{
    return read_u64(limits_dir(node) + name).value_or(dflt);
}

std::uint64_t counter(const std::string &node, const std::string &name)
{
    const auto v = read_u64(limits_dir(node) + name);
    if (!v)
        FAIL("cannot read " << limits_dir(node) << name);
    return *v;
}

// Sets a limit for the scope of a test and puts the old value back.
class LimitSet {
public:
    LimitSet(std::string node, std::string name, std::uint64_t value) : node_(std::move(node)), name_(std::move(name))
    {
        old_ = counter(node_, name_);
        set(value);
    }
    LimitSet(const LimitSet &) = delete;
    LimitSet &operator=(const LimitSet &) = delete;
    LimitSet(LimitSet &&) = delete;
    LimitSet &operator=(LimitSet &&) = delete;
    ~LimitSet() { (void)write_text(limits_dir(node_) + name_, std::to_string(old_)); }
    void set(std::uint64_t value) const
    {
        REQUIRE(write_text(limits_dir(node_) + name_, std::to_string(value)) == 0);
        REQUIRE(counter(node_, name_) == value);
    }

private:
    std::string node_;
    std::string name_;
    std::uint64_t old_ = 0;
};

// The counters that must be back after a test: page tables, jobs, HBM.
struct Usage {
    std::uint64_t page_tables;
    std::uint64_t jobs;
    std::uint64_t hbm;
};
// Without the limits directory (the old driver) only HBM is compared.
Usage usage_now(const std::string &node)
{
    const bool have = have_limits(node);
    CHECK(have);
    if (!have)
        return {0, 0, memory_now(node).hbm_used};
    return {counter(node, "page_tables_used"), counter(node, "jobs"), memory_now(node).hbm_used};
}
void check_back(const std::string &node, const Usage &u0)
{
    CHECK(wait_hbm_used(node, u0.hbm) == u0.hbm);
    if (!have_limits(node))
        return;
    CHECK(eventually([&] { return counter(node, "page_tables_used") == u0.page_tables; }, 5000));
    CHECK(eventually([&] { return counter(node, "jobs") == u0.jobs; }, 5000));
    const Usage u1 = usage_now(node);
    INFO("page tables " << u0.page_tables << " -> " << u1.page_tables << ", jobs " << u0.jobs << " -> " << u1.jobs);
    CHECK(u1.page_tables == u0.page_tables);
    CHECK(u1.jobs == u0.jobs);
}

// Another tenant's whole life in this process: open, bind HBM and host
// memory, create a queue, run a job that copies through both. Returns "" or
// what went wrong.
std::string tenant_works(const std::string &path, std::uint32_t engine = 1)
{
    Ctx c(path);
    std::uint32_t q = 0;
    if (const int e = c.queue_create(engine, q); e != 0)
        return "QUEUE_CREATE errno " + std::to_string(e);
    const auto host = c.host_buf(4 * KiB);
    const std::uint64_t hbm = c.hbm_buf(kHbmPage);
    const int st = c.run(q, Cb().memset(0x5a5a5a5a5a5a5a5aULL, hbm, 4 * KiB).lin_dma(hbm, host.va, 4 * KiB));
    if (st != 1)
        return "job status " + std::to_string(st);
    if (host.ptr[0] != 0x5a || host.ptr[4095] != 0x5a) // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
        return "job data wrong";
    return "";
}

// The same in a forked process (optionally under another uid); returns its
// exit status: 0 all good, 1 failed, 2 exception (e.g. open refused).
int tenant_process(const std::string &path, int uid = -1)
{
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        int rc = 0;
        try {
            if (uid >= 0 && (::setgid(static_cast<gid_t>(uid)) != 0 || ::setuid(static_cast<uid_t>(uid)) != 0))
                ::_exit(3);
            const std::string why = tenant_works(path, 2);
            if (!why.empty()) {
                std::fprintf(stderr, "tenant process: %s\n", why.c_str());
                rc = 1;
            }
        } catch (...) {
            rc = 2;
        }
        ::_exit(rc);
    }
    int st = 0;
    REQUIRE(::waitpid(pid, &st, 0) == pid);
    REQUIRE(WIFEXITED(st));
    return WEXITSTATUS(st);
}

// Binds `bo` (2 MiB of HBM) at every GiB from `*va` on until refused:
// each bind in a fresh GiB needs a new page table. Returns the errno of the
// refusal; *va is where it stopped, *binds counts the successes.
int bind_strided(const Ctx &c, std::uint32_t bo, std::uint64_t *va, std::uint64_t *binds)
{
    for (; *va < c.mem().va_end; *va += GiB) {
        std::uint64_t v = *va;
        const int e = c.map(bo, 0, kHbmPage, v, DRM_HPU_VM_FIXED);
        if (e != 0)
            return e;
        ++*binds;
    }
    return 0;
}

// Restores a device node's mode at the end of a test.
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

} // namespace

TEST_CASE("page tables: tenants binding at 1 GiB strides are refused before another context starves", "[security]")
{
    const std::string path = node(0);
    // Without the limits (the old driver) this still runs, and shows the
    // starvation: the first tenant fills the area and no one else can open.
    const bool have = have_limits(path);
    const Usage u0 = usage_now(path);
    const std::uint64_t total = have ? counter(path, "page_tables") : 0;
    const std::uint64_t cap = have ? counter(path, "ctx_page_tables") : 0;
    const std::uint64_t reserve = have ? counter(path, "pt_reserve") : 0;
    INFO("page tables: " << total << ", per context " << cap << ", reserved per ASID " << reserve);

    // Offenders bind until refused: the first at its own limit (ENOSPC),
    // later ones until only the other ASIDs' reserves are left (ENOMEM).
    std::vector<std::unique_ptr<Ctx>> hogs;
    std::vector<int> errs;
    std::uint64_t binds = 0;
    const std::uint64_t t0 = now_ns();
    for (int i = 0; i < 4 && (errs.empty() || errs.back() == ENOSPC); ++i) {
        hogs.push_back(std::make_unique<Ctx>(path));
        std::uint32_t bo = 0;
        REQUIRE(hogs.back()->bo_create(kHbmPage, DRM_HPU_BO_HBM, bo) == 0);
        std::uint64_t va = hogs.back()->mem().va_start;
        errs.push_back(bind_strided(*hogs.back(), bo, &va, &binds));
        // Exactly its limit: the root, the L1 tables and one L2 per GiB.
        if (i == 0 && have)
            CHECK(counter(path, "page_tables_used") - u0.page_tables == cap);
    }
    const double ms = ms_since(t0);
    std::printf("page-table hogs: %zu contexts, %llu binds in %.0f ms, first refused with errno %d\n", hogs.size(),
                static_cast<unsigned long long>(binds), ms, errs.front());
    CHECK(errs.front() == ENOSPC);
    CHECK(errs.back() == ENOMEM);
    // The area is full but for the other ASIDs' reserves.
    if (have)
        CHECK(counter(path, "page_tables_used") + 62 * reserve >= total);

    // Everyone else is untouched: a new context here, another process.
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
    const int open_errno = fd < 0 ? errno : 0;
    INFO("open(2) by another tenant while the hogs hold their tables: errno " << open_errno);
    REQUIRE(fd >= 0);
    ::close(fd);
    CHECK(tenant_works(path).empty());
    CHECK(tenant_process(path) == 0);
    // The offenders may still use what they have, e.g. unmap and map again.
    {
        const Ctx &h = *hogs.front();
        REQUIRE(h.unmap(h.mem().va_start) == 0);
        std::uint32_t bo = 0;
        REQUIRE(h.bo_create(kHbmPage, DRM_HPU_BO_HBM, bo) == 0);
        std::uint64_t va = h.mem().va_start;
        CHECK(h.map(bo, 0, kHbmPage, va, DRM_HPU_VM_FIXED) == 0);
    }

    hogs.clear();
    check_back(path, u0);
}

TEST_CASE("page tables: root's ctx_page_tables sets where a context is refused", "[security]")
{
    const std::string path = node(0);
    const Usage u0 = usage_now(path);
    LimitSet lim(path, "ctx_page_tables", 8);
    {
        Ctx a(path);
        std::uint32_t bo = 0;
        REQUIRE(a.bo_create(kHbmPage, DRM_HPU_BO_HBM, bo) == 0);
        std::uint64_t va = a.mem().va_start;
        std::uint64_t binds = 0;
        // Root, one L1 and six L2 tables: six binds, then ENOSPC.
        CHECK(bind_strided(a, bo, &va, &binds) == ENOSPC);
        CHECK(binds == 6);
        CHECK(counter(path, "page_tables_used") - u0.page_tables == 8);
        // Refused, nothing half done: still exactly the limit.
        CHECK(bind_strided(a, bo, &va, &binds) == ENOSPC);
        CHECK(counter(path, "page_tables_used") - u0.page_tables == 8);
        // Another context has a limit of its own.
        CHECK(tenant_works(path).empty());

        lim.set(16);
        CHECK(bind_strided(a, bo, &va, &binds) == ENOSPC);
        CHECK(binds == 14);
        CHECK(counter(path, "page_tables_used") - u0.page_tables == 16);
        // Lowered below what it holds: it keeps its tables, gets no more.
        lim.set(4);
        CHECK(bind_strided(a, bo, &va, &binds) == ENOSPC);
        CHECK(binds == 14);
        std::uint64_t other = a.mem().va_start + GiB;
        CHECK(a.unmap(other) == 0); // an empty L2 goes back
        CHECK(counter(path, "page_tables_used") - u0.page_tables == 15);
        CHECK(a.map(bo, 0, kHbmPage, other, DRM_HPU_VM_FIXED) == ENOSPC);
    }
    check_back(path, u0);
}

TEST_CASE("mappings: a context at ctx_mappings gets ENOSPC, others map on", "[security]")
{
    const std::string path = node(0);
    const Usage u0 = usage_now(path);
    // The default: 65536 mappings, then ENOSPC.
    {
        const std::uint64_t max = limit_or(path, "ctx_mappings", 65536);
        Ctx a(path);
        std::uint32_t bo = 0;
        REQUIRE(a.bo_create(kHostPage, DRM_HPU_BO_HOST, bo) == 0);
        std::uint64_t n = 0;
        int e = 0;
        for (; n <= max && e == 0; ++n) {
            std::uint64_t va = 0;
            e = a.map(bo, 0, kHostPage, va);
        }
        CHECK(e == ENOSPC);
        CHECK(n == max + 1);
        CHECK(tenant_works(path).empty());
    }
    LimitSet lim(path, "ctx_mappings", 64);
    {
        Ctx a(path);
        std::uint32_t bo = 0;
        REQUIRE(a.bo_create(kHostPage, DRM_HPU_BO_HOST, bo) == 0);
        std::vector<std::uint64_t> vas;
        int e = 0;
        for (int i = 0; i < 100 && e == 0; ++i) {
            std::uint64_t va = 0;
            e = a.map(bo, 0, kHostPage, va);
            if (e == 0)
                vas.push_back(va);
        }
        CHECK(e == ENOSPC);
        CHECK(vas.size() == 64);
        // One unmapped, one more may be made.
        REQUIRE(a.unmap(vas.back()) == 0);
        vas.pop_back();
        std::uint64_t va = 0;
        CHECK(a.map(bo, 0, kHostPage, va) == 0);
        std::uint64_t va2 = 0;
        CHECK(a.map(bo, 0, kHostPage, va2) == ENOSPC);
        // Another context is not affected.
        CHECK(tenant_works(path).empty());
        // Root raises the limit: the context maps again.
        lim.set(66);
        CHECK(a.map(bo, 0, kHostPage, va2) == 0);
        std::uint64_t va3 = 0;
        CHECK(a.map(bo, 0, kHostPage, va3) == 0);
        std::uint64_t va4 = 0;
        CHECK(a.map(bo, 0, kHostPage, va4) == ENOSPC);
    }
    check_back(path, u0);
}

TEST_CASE("mappings: the kernel memory of a tenant's mappings is charged to its memory cgroup", "[security]")
{
    const std::string path = node(0);
    const std::string root = "/sys/fs/cgroup";
    if (!read_text(root + "/cgroup.controllers"))
        REQUIRE(::mount("none", root.c_str(), "cgroup2", 0, nullptr) == 0);
    const auto ctl = read_text(root + "/cgroup.controllers");
    REQUIRE(ctl);
    REQUIRE(ctl->find("memory") != std::string::npos);
    (void)write_text(root + "/cgroup.subtree_control", "+memory");
    const std::string cg = root + "/hpu-sec-limits";
    (void)::rmdir(cg.c_str());
    REQUIRE(::mkdir(cg.c_str(), 0755) == 0);
    const Usage u0 = usage_now(path);
    constexpr int kMaps = 16384;

    // The child joins the cgroup, maps one host page kMaps times and
    // reports its cgroup's unreclaimable slab bytes before and after.
    std::array<int, 2> up{};
    REQUIRE(::pipe(up.data()) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(up[0]);
        auto slab = [&]() -> long long {
            const auto t = read_text(cg + "/memory.stat").value_or("");
            const auto p = t.find("slab_unreclaimable ");
            return p == std::string::npos ? -1 : std::stoll(t.substr(p + 19));
        };
        std::array<long long, 2> r{-1, -1};
        try {
            if (write_text(cg + "/cgroup.procs", std::to_string(::getpid())) != 0)
                ::_exit(1);
            Ctx c(path);
            std::uint32_t bo = 0;
            if (c.bo_create(kHostPage, DRM_HPU_BO_HOST, bo) != 0)
                ::_exit(2);
            r[0] = slab();
            for (int i = 0; i < kMaps; ++i) {
                std::uint64_t va = 0;
                if (c.map(bo, 0, kHostPage, va) != 0)
                    ::_exit(3);
            }
            r[1] = slab();
        } catch (...) {
            ::_exit(4);
        }
        (void)!::write(up[1], r.data(), sizeof(r));
        ::_exit(0);
    }
    ::close(up[1]);
    std::array<long long, 2> r{-1, -1};
    const bool got = ::read(up[0], r.data(), sizeof(r)) == static_cast<ssize_t>(sizeof(r));
    ::close(up[0]);
    int st = 0;
    REQUIRE(::waitpid(pid, &st, 0) == pid);
    (void)::rmdir(cg.c_str());
    REQUIRE(WIFEXITED(st));
    REQUIRE(WEXITSTATUS(st) == 0);
    REQUIRE(got);
    REQUIRE(r[0] >= 0);
    const long long delta = r[1] - r[0];
    std::printf("%d mappings: cgroup slab_unreclaimable +%lld bytes\n", kMaps, delta);
    // A mapping is a drm_mm node and a few fields: at least 64 bytes each.
    CHECK(delta >= 64LL * kMaps);
    check_back(path, u0);
}

TEST_CASE("queues: a context at ctx_queues gets ENOSPC, others create theirs", "[security]")
{
    const std::string path = node(0);
    const Usage u0 = usage_now(path);
    LimitSet lim(path, "ctx_queues", 4);
    {
        Ctx a(path);
        std::vector<std::uint32_t> qs(4);
        for (auto &q : qs)
            REQUIRE(a.queue_create(0, q) == 0);
        std::uint32_t refused = 0;
        CHECK(a.queue_create(1, refused) == ENOSPC);
        CHECK(tenant_works(path).empty());
        REQUIRE(a.queue_destroy(qs.back()) == 0);
        CHECK(a.queue_create(1, qs.back()) == 0);
        CHECK(a.queue_create(1, refused) == ENOSPC);
        lim.set(5);
        std::uint32_t q = 0;
        CHECK(a.queue_create(1, q) == 0);
        CHECK(a.queue_create(1, refused) == ENOSPC);
        // The queues work.
        CHECK(a.run(q, Cb().nop()) == 1);
        CHECK(a.run(qs.back(), Cb().nop()) == 1);
    }
    check_back(path, u0);
}

TEST_CASE("jobs: a context at ctx_jobs in flight gets EBUSY, others run", "[security]")
{
    const std::string path = node(0);
    constexpr std::uint32_t kSob = 20;
    const Usage u0 = usage_now(path);
    // The default, 1024: one job stuck and the rest waiting for it as an
    // in-sync; one more is refused. In a child process that holds them
    // until it is killed (its exit cancels the jobs): the stuck job never
    // ends on its own while the submissions run, however slow the guest (a
    // short timeout let it end, and the jobs behind it drain, before the
    // 1024th submission).
    {
        const std::uint64_t max = limit_or(path, "ctx_jobs", 1024);
        std::array<int, 2> up{};
        REQUIRE(::pipe(up.data()) == 0);
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            // {errno of the last submission, jobs in flight then, status
            // of the stuck job after them (0: still pending)}
            std::array<long, 3> r{-1, 0, -1};
            try {
                Ctx a(path);
                std::uint32_t q0 = 0;
                std::uint32_t q1 = 0;
                if (a.queue_create(0, q0) == 0 && a.queue_create(1, q1) == 0 &&
                    a.run(q1, Cb().sob_update(kSob, 0)) == 1) {
                    const Cb stuck = Cb().wait(kSob, 1);
                    const std::uint64_t va = a.put_cb(stuck);
                    const Cb nop = Cb().nop();
                    const std::uint64_t nva = a.put_cb(nop);
                    std::uint32_t head = 0;
                    if (syncobj_create(a.fd(), head) == 0 &&
                        a.submit(q0, va, stuck.bytes(), head, {}, 600 * 1000) == 0) {
                        int e = 0;
                        long n = 1;
                        for (; n <= static_cast<long>(max) && e == 0; ++n)
                            e = a.submit(q1, nva, nop.bytes(), 0, {head});
                        r = {e, n - 1, syncobj_status(a.fd(), head)};
                    }
                }
                (void)!::write(up[1], r.data(), sizeof(r));
                ::pause();
            } catch (...) {
                (void)!::write(up[1], r.data(), sizeof(r));
            }
            ::_exit(0);
        }
        ::close(up[1]);
        std::array<long, 3> r{};
        const ssize_t got = ::read(up[0], r.data(), sizeof(r));
        ::close(up[0]);
        REQUIRE(got == static_cast<ssize_t>(sizeof(r)));
        INFO("last submission errno " << r[0] << " after " << r[1] << " accepted; stuck job status " << r[2]);
        CHECK(r[0] == EBUSY);
        CHECK(r[1] == static_cast<long>(max)); // the stuck job and max - 1 behind it, then the refusal
        CHECK(r[2] == 0);
        // Another context runs while this one is full.
        CHECK(tenant_works(path, 2).empty());
        ::kill(pid, SIGKILL);
        int st = 0;
        REQUIRE(::waitpid(pid, &st, 0) == pid);
    }
    LimitSet lim(path, "ctx_jobs", 8);
    {
        Ctx a(path);
        std::uint32_t q = 0;
        std::uint32_t qr = 0;
        REQUIRE(a.queue_create(0, q) == 0);
        REQUIRE(a.queue_create(1, qr) == 0);
        // The sync object may hold an earlier context's value: clear it.
        REQUIRE(a.run(qr, Cb().sob_update(kSob, 0)) == 1);
        REQUIRE(eventually([&] { return counter(path, "jobs") == u0.jobs; }, 5000));
        const Cb stuck = Cb().wait(kSob, 1);
        const std::uint64_t va = a.put_cb(stuck);
        const Cb rel = Cb().sob_update(kSob, 1);
        const std::uint64_t rva = a.put_cb(rel);
        std::vector<std::uint32_t> sos(9);
        for (auto &so : sos)
            REQUIRE(syncobj_create(a.fd(), so) == 0);
        for (int i = 0; i < 8; ++i)
            REQUIRE(a.submit(q, va, stuck.bytes(), sos[i], {}, 30000) == 0);
        CHECK(a.submit(q, va, stuck.bytes(), sos[8], {}, 30000) == EBUSY);
        CHECK(a.submit(qr, rva, rel.bytes(), sos[8], {}, 30000) == EBUSY);
        // Another context runs while this one is at its limit.
        CHECK(tenant_works(path, 2).empty());
        CHECK(tenant_process(path) == 0);
        // Root raises it by one: the release job fits.
        lim.set(9);
        REQUIRE(a.submit(qr, rva, rel.bytes(), sos[8], {}, 30000) == 0);
        for (auto so : sos) {
            CHECK(syncobj_wait(a.fd(), so) == 0);
            CHECK(syncobj_status(a.fd(), so) == 1);
        }
        // Once they are freed, the context submits again.
        CHECK(eventually([&] { return counter(path, "jobs") == u0.jobs; }, 5000));
        CHECK(a.run(q, Cb().nop()) == 1);
        for (auto so : sos)
            syncobj_destroy(a.fd(), so);
    }
    check_back(path, u0);
}

TEST_CASE("timeouts: without CAP_SYS_ADMIN a job may not ask for more than user_timeout_ms", "[security]")
{
    const std::string path = node(0);
    const Usage u0 = usage_now(path);
    const std::uint64_t ceiling = limit_or(path, "user_timeout_ms", 60000);
    REQUIRE(ceiling < 3600000);
    {
        Ctx c(path);
        std::uint32_t q = 0;
        REQUIRE(c.queue_create(0, q) == 0);
        const Cb nop = Cb().nop();
        const std::uint64_t va = c.put_cb(nop);
        // As uid 65534 on the same file: bits of what went wrong.
        auto unprivileged = [&](std::uint32_t limit) {
            const pid_t pid = ::fork();
            REQUIRE(pid >= 0);
            if (pid == 0) {
                int rc = 0;
                if (::setgid(65534) != 0 || ::setuid(65534) != 0)
                    ::_exit(0x40);
                if (c.submit(q, va, nop.bytes(), 0, {}, limit + 1) != EINVAL)
                    rc |= 1;
                if (c.submit(q, va, nop.bytes(), 0, {}, 3600000) != EINVAL)
                    rc |= 2;
                if (c.submit(q, va, nop.bytes(), 0, {}, limit) != 0)
                    rc |= 4;
                if (c.submit(q, va, nop.bytes(), 0, {}, 0) != 0)
                    rc |= 8;
                ::_exit(rc);
            }
            int st = 0;
            REQUIRE(::waitpid(pid, &st, 0) == pid);
            REQUIRE(WIFEXITED(st));
            return WEXITSTATUS(st);
        };
        CHECK(unprivileged(static_cast<std::uint32_t>(ceiling)) == 0);
        // Root may ask for up to the maximum.
        CHECK(c.submit(q, va, nop.bytes(), 0, {}, 3600000) == 0);
        CHECK(c.submit(q, va, nop.bytes(), 0, {}, 3600001) == EINVAL);
        // The old driver has no knob: shown above, stop here.
        REQUIRE(have_limits(path));
        {
            LimitSet lim(path, "user_timeout_ms", 500);
            CHECK(unprivileged(500) == 0);
            CHECK(c.submit(q, va, nop.bytes(), 0, {}, 501) == 0);
        }
        CHECK(counter(path, "user_timeout_ms") == ceiling);
        CHECK(c.run(q, nop) == 1);
    }
    check_back(path, u0);
}

// A process of `uid` that opens the device until refused, reopens after
// closing one, and holds its files until released.
class Opener {
public:
    explicit Opener(const std::string &path, int uid = 65534)
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
    [[nodiscard]] bool reopened() const { return res_[2] == 1; }

private:
    [[noreturn]] void child(const std::string &path, int uid)
    {
        ::close(up_[0]);
        ::close(down_[1]);
        std::array<int, 3> r{0, 0, 0};
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
            if (!fds.empty()) {
                ::close(fds.back());
                fds.pop_back();
                const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC); // NOLINT(cppcoreguidelines-pro-type-vararg)
                r[2] = fd >= 0 ? 1 : 0;
                if (fd >= 0)
                    fds.push_back(fd);
            }
        }
        (void)!::write(up_[1], r.data(), sizeof(r));
        char c = 0;
        (void)!::read(down_[0], &c, 1);
        ::_exit(0);
    }
    std::array<int, 2> up_{};
    std::array<int, 2> down_{};
    pid_t pid_ = -1;
    std::array<int, 3> res_{-1, -1, -1};
};

TEST_CASE("contexts: one user holds at most user_contexts open files, others and root still open", "[security]")
{
    const std::string path = node(0);
    const Usage u0 = usage_now(path);
    ModeGuard mode(path, 0666);
    // The default, 32 (about half of the 63 ASIDs).
    {
        const std::uint64_t max = limit_or(path, "user_contexts", 32);
        const Opener o(path);
        CHECK(o.opened() == static_cast<int>(max));
        CHECK(o.refused_errno() == EBUSY);
        CHECK(o.reopened());
        // While uid 65534 is at its limit: another user, and root, work.
        CHECK(tenant_process(path, 65533) == 0);
        CHECK(tenant_works(path).empty());
    }
    {
        LimitSet lim(path, "user_contexts", 3);
        {
            const Opener o(path);
            CHECK(o.opened() == 3);
            CHECK(o.refused_errno() == EBUSY);
            CHECK(o.reopened());
            CHECK(tenant_process(path, 65533) == 0);
            CHECK(tenant_works(path).empty());
        }
        // Its files are closed: the user may open again.
        lim.set(1);
        CHECK(tenant_process(path, 65534) == 0);
    }
    check_back(path, u0);
}

TEST_CASE("limits: only root changes them, within their ranges", "[security]")
{
    const std::string path = node(0);
    const std::string dir = limits_dir(path);
    const std::vector<std::string> names = {"ctx_page_tables", "pt_reserve", "ctx_mappings", "ctx_queues",
                                            "ctx_jobs", "user_contexts", "user_timeout_ms"};
    std::vector<std::uint64_t> before;
    before.reserve(names.size());
    for (const auto &n : names)
        before.push_back(counter(path, n));
    const std::uint64_t total = counter(path, "page_tables");

    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        int rc = 0;
        if (::setgid(65534) != 0 || ::setuid(65534) != 0)
            ::_exit(0x40);
        for (const auto &n : names) {
            if (write_text(dir + n, "1") != EACCES)
                rc |= 1;
            if (!read_u64(dir + n))
                rc |= 2; // reading is for everyone
        }
        ::_exit(rc);
    }
    int st = 0;
    REQUIRE(::waitpid(pid, &st, 0) == pid);
    REQUIRE(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 0);

    CHECK(write_text(dir + "ctx_page_tables", "0") == EINVAL);
    CHECK(write_text(dir + "ctx_page_tables", std::to_string(total + 1)) == EINVAL);
    CHECK(write_text(dir + "pt_reserve", std::to_string(total / 63 + 1)) == EINVAL);
    CHECK(write_text(dir + "ctx_queues", "65") == EINVAL);
    CHECK(write_text(dir + "user_contexts", "0") == EINVAL);
    CHECK(write_text(dir + "user_contexts", "64") == EINVAL);
    CHECK(write_text(dir + "user_timeout_ms", "3600001") == EINVAL);
    CHECK(write_text(dir + "ctx_jobs", "-1") == EINVAL);
    CHECK(write_text(dir + "ctx_jobs", "many") == EINVAL);
    CHECK(write_text(dir + "page_tables_used", "0") == EACCES);
    for (std::size_t i = 0; i < names.size(); ++i) {
        INFO(names[i]);
        CHECK(counter(path, names[i]) == before[i]);
    }
    // Defaults generous enough for the rest of the suite.
    CHECK(counter(path, "ctx_queues") == 64);
    CHECK(counter(path, "ctx_page_tables") >= total / 2);
}

TEST_CASE("contexts: users without CAP_SYS_ADMIN together hold at most unprivileged_contexts, root still opens",
          "[security]")
{
    const std::string path = node(0);
    const Usage u0 = usage_now(path);
    const ModeGuard mode(path, 0666);
    const std::uint64_t dflt = counter(path, "unprivileged_contexts");
    CHECK(dflt == 59);
    const std::uint64_t per_user = counter(path, "user_contexts");
    {
        // Two uids at a per-user limit of 40 would take every ASID but one.
        const LimitSet lim(path, "user_contexts", 40);
        const Opener a(path, 65534);
        const Opener b(path, 65533);
        INFO("uid 65534 opened " << a.opened() << ", uid 65533 " << b.opened());
        CHECK(a.opened() == 40);
        CHECK(b.opened() == 19);
        CHECK(b.refused_errno() == EBUSY);
        // Root still opens the four left; a third uid does not get one.
        std::vector<std::unique_ptr<Ctx>> root;
        root.reserve(4);
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
    CHECK(counter(path, "user_contexts") == per_user);
    CHECK(write_text(limits_dir(path) + "unprivileged_contexts", "0") == EINVAL);
    CHECK(write_text(limits_dir(path) + "unprivileged_contexts", "64") == EINVAL);
    CHECK(counter(path, "unprivileged_contexts") == dflt);
    check_back(path, u0);
}

TEST_CASE("limits: the usage counters are for root only, the limits for everyone", "[security]")
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
