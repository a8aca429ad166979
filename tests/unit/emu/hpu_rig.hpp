// SPDX-License-Identifier: MIT
//
// A test rig on top of the fake environment: host-memory and HBM
// allocation, page tables built in HBM through the backdoor, streams set
// up with rings in host memory, command-buffer building, submission, and
// synchronous engine stepping.
//
// Copyright (c) 2026 The hpu authors
#pragma once

#include "hpu_fake_env.hpp"
#include "hpu_cb.h"

#include <algorithm>

namespace hpu_test {

constexpr uint64_t MiB = 1ULL << 20;
constexpr uint64_t PG = 4096;
constexpr uint64_t HUGE_PG = 2 * MiB;

inline uint64_t host_addr(uint64_t bus) { return HPU_ADDR_HOST | bus; }

struct Cqe {
    uint64_t seq;
    uint32_t status;
    uint32_t offset;
    uint8_t engine;
    uint8_t stream;
};

struct Eqe {
    uint16_t id;
    uint8_t severity;
    uint8_t engine;
    uint16_t asid;
    uint64_t timestamp;
    uint64_t addr;
    uint32_t info;
};

// Command buffer builder (tests/common/hpu_cb.h)
using Cb = CmdBuf;

struct Rig : Dev {
    uint64_t host_next = HOST_BASE + MiB;  // bump allocator (bus addresses)
    uint64_t pt_next = PG;                 // page tables from HBM 4 KiB
    uint64_t roots[HPU_MMU_NUM_ASIDS] = {};
    uint64_t va_next = 0x100000000ULL;     // user VA allocator
    uint64_t cb_va_next = 0x4000000000ULL; // command buffers, apart
    struct Stream {
        uint64_t ring = 0, cq = 0;
        uint32_t size = 0, pi = 0;
    } q[HPU_H1_ENGINES][HPU_H1_STREAMS];
    uint64_t eq = 0;
    uint32_t eq_size = 0;

    explicit Rig(uint64_t hbm = 256 * MiB) : Dev(hbm) {}
    explicit Rig(const DevOpts &o) : Dev(o) {}

    // host memory
    uint64_t halloc(uint64_t n, uint64_t align = 64)
    {
        host_next = (host_next + align - 1) & ~(align - 1);
        uint64_t a = host_next;
        host_next += n;
        REQUIRE(env.host_range(a, n));
        return a;
    }
    uint8_t *hp(uint64_t bus) { return env.host.data() + (bus - HOST_BASE); }
    void hwrite(uint64_t bus, const void *p, size_t n)
    {
        if (n) { // an empty vector's data() may be null: memcpy's UB
            std::memcpy(hp(bus), p, n);
        }
    }
    uint32_t hrd32(uint64_t bus)
    {
        uint32_t v;
        std::memcpy(&v, hp(bus), 4);
        return v;
    }
    // HBM backdoor
    void bwrite(uint64_t off, const void *p, size_t n)
    {
        REQUIRE(hpum_core_hbm_write(&core, off, p, n));
    }
    std::vector<uint8_t> bread(uint64_t off, size_t n)
    {
        std::vector<uint8_t> v(n);
        REQUIRE(hpum_core_hbm_read(&core, off, v.data(), n));
        return v;
    }
    uint64_t bread64(uint64_t off)
    {
        uint64_t v;
        REQUIRE(hpum_core_hbm_read(&core, off, &v, 8));
        return v;
    }
    void bwrite64(uint64_t off, uint64_t v) { bwrite(off, &v, 8); }

    // page tables: tables are taken from HBM [0, 16 MiB)
    uint64_t new_table()
    {
        uint64_t t = pt_next;
        pt_next += PG;
        REQUIRE(pt_next <= 16 * MiB);
        std::vector<uint8_t> z(PG);
        bwrite(t, z.data(), PG);
        return t;
    }
    void set_root(unsigned int asid)
    {
        roots[asid] = new_table();
        wr(HPU_REG_MMU_ROOT_LO(asid),
           static_cast<uint32_t>(roots[asid]) | HPU_MMU_ROOT_VALID);
        wr(HPU_REG_MMU_ROOT_HI(asid), static_cast<uint32_t>(roots[asid] >> 32));
    }
    // Address of the PTE for @va at @level (0..3), making tables on the way.
    uint64_t pte_slot(unsigned int asid, uint64_t va, unsigned int level)
    {
        if (!roots[asid]) {
            set_root(asid);
        }
        uint64_t table = roots[asid];
        for (unsigned int l = 0;; l++) {
            uint64_t slot = table + 8 * ((va >> (39 - 9 * l)) & 511);
            if (l == level) {
                return slot;
            }
            uint64_t pte = bread64(slot);
            if (!(pte & HPU_PTE_PRESENT)) {
                pte = new_table() | HPU_PTE_PRESENT;
                bwrite64(slot, pte);
            }
            table = pte & HPU_PTE_ADDR_MASK;
        }
    }
    void map(unsigned int asid, uint64_t va, uint64_t target, uint64_t flags,
             bool huge = false)
    {
        uint64_t pte = target | flags | HPU_PTE_PRESENT;
        if (huge) {
            bwrite64(pte_slot(asid, va, 2), pte | HPU_PTE_HUGE);
        } else {
            bwrite64(pte_slot(asid, va, 3), pte);
        }
    }
    // Map host [bus, bus + n) at a fresh VA with 4 KiB pages.
    uint64_t map_host(unsigned int asid, uint64_t bus, uint64_t n,
                      bool write = true, uint64_t *next = nullptr)
    {
        uint64_t &vn = next ? *next : va_next;
        uint64_t off = bus & (PG - 1);
        uint64_t va = vn + off;
        uint64_t pages = (off + n + PG - 1) / PG;
        for (uint64_t i = 0; i < pages; i++) {
            map(asid, vn + i * PG, (bus & ~(PG - 1)) + i * PG,
                HPU_PTE_HOST | (write ? HPU_PTE_WRITE : 0));
        }
        vn += (pages + 1) * PG;               // leave a hole
        return va;
    }
    // Map HBM [off, off + n) (2 MiB aligned) at a fresh VA with 2 MiB pages.
    uint64_t map_hbm(unsigned int asid, uint64_t off, uint64_t n,
                     bool write = true)
    {
        va_next = (va_next + HUGE_PG - 1) & ~(HUGE_PG - 1);
        uint64_t va = va_next;
        for (uint64_t i = 0; i < (n + HUGE_PG - 1) / HUGE_PG; i++) {
            map(asid, va + i * HUGE_PG, off + i * HUGE_PG,
                write ? HPU_PTE_WRITE : 0, true);
        }
        va_next += ((n + HUGE_PG - 1) / HUGE_PG + 1) * HUGE_PG;
        return va;
    }

    // streams
    uint32_t qreg(unsigned int e, unsigned int s, uint32_t r)
    {
        return HPU_REG_QM_STREAM(e, s) + r;
    }
    void setup_stream(unsigned int e, unsigned int s, uint32_t size = 16,
                      bool irq = true)
    {
        Stream &st = q[e][s];
        st.ring = halloc(size * HPU_DESC_SIZE);
        st.cq = halloc(size * HPU_CQE_SIZE);
        st.size = size;
        st.pi = 0;
        wr(qreg(e, s, HPU_QS_RING_LO), static_cast<uint32_t>(st.ring));
        wr(qreg(e, s, HPU_QS_RING_HI), static_cast<uint32_t>(st.ring >> 32));
        wr(qreg(e, s, HPU_QS_RING_SIZE), size);
        wr(qreg(e, s, HPU_QS_CQ_LO), static_cast<uint32_t>(st.cq));
        wr(qreg(e, s, HPU_QS_CQ_HI), static_cast<uint32_t>(st.cq >> 32));
        wr(qreg(e, s, HPU_QS_CQ_SIZE), size);
        wr(qreg(e, s, HPU_QS_CTRL),
           HPU_QS_CTRL_ENABLE | (irq ? HPU_QS_CTRL_IRQ_EN : 0));
    }
    void put_desc(unsigned int e, unsigned int s, uint64_t cb_addr,
                  uint32_t cb_size, uint16_t asid, uint64_t seq,
                  uint16_t flags = 0, uint64_t rsvd = 0)
    {
        Stream &st = q[e][s];
        uint8_t d[HPU_DESC_SIZE];
        std::memcpy(d, &cb_addr, 8);
        std::memcpy(d + 8, &cb_size, 4);
        std::memcpy(d + 12, &asid, 2);
        std::memcpy(d + 14, &flags, 2);
        std::memcpy(d + 16, &seq, 8);
        std::memcpy(d + 24, &rsvd, 8);
        hwrite(st.ring + (st.pi % st.size) * HPU_DESC_SIZE, d, sizeof(d));
        st.pi++;
    }
    void ring(unsigned int e, unsigned int s)
    {
        wr(qreg(e, s, HPU_QS_PI), q[e][s].pi);
    }
    // Place @cb in host memory; its address as seen from @asid.
    uint64_t place_cb(const Cb &cb, unsigned int asid)
    {
        uint64_t bus = halloc(cb.size() ? cb.size() : 8, 8);
        hwrite(bus, cb.data(), cb.size());
        return asid ? map_host(asid, bus, cb.size(), false, &cb_va_next)
                    : host_addr(bus);
    }
    void submit(unsigned int e, unsigned int s, const Cb &cb,
                unsigned int asid = 0, uint64_t seq = 0)
    {
        put_desc(e, s, place_cb(cb, asid), cb.size(), asid,
                 seq ? seq : 0x5e00 + q[e][s].pi);
        ring(e, s);
    }
    // Step every engine until no engine has work.
    void run(unsigned int max_steps = 100000)
    {
        for (unsigned int n = 0; n < max_steps; n++) {
            bool more = false;
            for (unsigned int e = 0; e < HPU_H1_ENGINES; e++) {
                more |= hpum_core_engine_step(&core, e);
            }
            bh();
            if (!more) {
                return;
            }
        }
        FAIL("engines still busy");
    }
    Cqe cqe(unsigned int e, unsigned int s, uint32_t i)
    {
        const uint8_t *p = hp(q[e][s].cq + (i % q[e][s].size) * HPU_CQE_SIZE);
        Cqe c;
        std::memcpy(&c.seq, p, 8);
        uint32_t where;
        std::memcpy(&c.status, p + 8, 4);
        std::memcpy(&where, p + 12, 4);
        c.offset = where & HPU_CQE_OFFSET_MASK;
        c.engine = static_cast<uint8_t>((where & HPU_CQE_ENGINE_MASK) >>
                                        HPU_CQE_ENGINE_SHIFT);
        c.stream = static_cast<uint8_t>((where & HPU_CQE_STREAM_MASK) >>
                                        HPU_CQE_STREAM_SHIFT);
        return c;
    }
    uint32_t cq_pi(unsigned int e, unsigned int s)
    {
        return rd(qreg(e, s, HPU_QS_CQ_PI));
    }
    uint32_t status(unsigned int e, unsigned int s)
    {
        return rd(qreg(e, s, HPU_QS_STATUS));
    }
    // Run one CB on engine @e stream @s and return its completion record.
    Cqe run_cb(const Cb &cb, unsigned int asid = 0, unsigned int e = 0,
               unsigned int s = 0)
    {
        if (!q[e][s].size) {
            setup_stream(e, s);
        }
        uint32_t before = cq_pi(e, s);
        submit(e, s, cb, asid);
        run();
        REQUIRE(cq_pi(e, s) == before + 1);
        return cqe(e, s, before);
    }
    // event queue
    void setup_eq(uint32_t size = 16)
    {
        eq = halloc(size * HPU_EQE_SIZE);
        eq_size = size;
        wr(HPU_REG_EQ_LO, static_cast<uint32_t>(eq));
        wr(HPU_REG_EQ_HI, static_cast<uint32_t>(eq >> 32));
        wr(HPU_REG_EQ_SIZE, size);
        wr(HPU_REG_EQ_CTRL, HPU_EQ_ENABLE);
    }
    Eqe eqe(uint32_t i)
    {
        const uint8_t *p = hp(eq + (i % eq_size) * HPU_EQE_SIZE);
        Eqe v;
        std::memcpy(&v.id, p, 2);
        v.severity = p[2];
        v.engine = p[3];
        std::memcpy(&v.asid, p + 4, 2);
        std::memcpy(&v.timestamp, p + 8, 8);
        std::memcpy(&v.addr, p + 16, 8);
        std::memcpy(&v.info, p + 24, 4);
        return v;
    }
};

inline std::vector<uint8_t> pattern_bytes(size_t n, uint32_t seed)
{
    std::vector<uint8_t> v(n);
    uint32_t x = seed * 2654435761u + 1;
    for (auto &b : v) {
        x = x * 1103515245u + 12345u;
        b = static_cast<uint8_t>(x >> 16);
    }
    return v;
}

} // namespace hpu_test
