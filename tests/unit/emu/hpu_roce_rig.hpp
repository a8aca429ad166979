// SPDX-License-Identifier: MIT
//
// A rig for the RoCE v2 engine of spec version 7 part 2
// (Documentation/hw/roce.md) on the fake environment: ports 0 and 1 wired
// back to back (every frame one sends arrives at the other, unless the
// test's filter drops it), objects created through the command interface
// with rings and buffers in host memory reached through ASID 0, WQEs
// posted and CQEs polled as a provider would.  Everything runs when the
// test says so (pump()); device time moves only with advance().
//
// Copyright (c) 2026 The hpu authors
#pragma once

#include "hpu_rig.hpp"

#include <functional>

namespace hpu_test {

using Bytes = std::vector<uint8_t>;

inline void put16(uint8_t *p, uint16_t v) { std::memcpy(p, &v, 2); }
inline void put32(uint8_t *p, uint32_t v) { std::memcpy(p, &v, 4); }
inline void put64(uint8_t *p, uint64_t v) { std::memcpy(p, &v, 8); }
inline uint32_t get32(const uint8_t *p) { uint32_t v; std::memcpy(&v, p, 4); return v; }
inline uint64_t get64(const uint8_t *p) { uint64_t v; std::memcpy(&v, p, 8); return v; }

// An independent ICRC: zlib's CRC-32 (all-ones start, final inversion)
// over eight 0xff bytes then the masked IP/UDP/BTH and the rest, as
// tests/vm/rdma/icrc-check.py computes it.
inline uint32_t ref_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) {
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
        }
    }
    return ~crc;
}

inline uint32_t ref_icrc(const Bytes &f)
{
    size_t ip = 14, iph = (f[ip] >> 4) == 4 ? 20 : 40;
    Bytes m(8 + f.size() - ip - 4, 0xff);
    std::memcpy(m.data() + 8, f.data() + ip, f.size() - ip - 4);
    uint8_t *h = m.data() + 8;
    if (iph == 20) {
        h[1] = 0xff;
        h[8] = 0xff;
        h[10] = h[11] = 0xff;
    } else {
        h[0] |= 0x0f;
        h[1] = h[2] = h[3] = 0xff;
        h[7] = 0xff;
    }
    h[iph + 6] = h[iph + 7] = 0xff;
    h[iph + 8 + 4] = 0xff;
    return ref_crc32(0, m.data(), m.size());
}

// A RoCE frame's fields as the tests look at them.
struct Pkt {
    unsigned int port;
    Bytes f;
    size_t bth() const { return 14 + ((f[14] >> 4) == 4 ? 20 : 40) + 8; }
    uint8_t op() const { return f[bth()]; }
    bool ackreq() const { return f[bth() + 8] & 0x80; }
    uint32_t psn() const
    {
        size_t b = bth() + 9;
        return static_cast<uint32_t>(f[b] << 16 | f[b + 1] << 8 | f[b + 2]);
    }
    uint32_t dqpn() const
    {
        size_t b = bth() + 5;
        return static_cast<uint32_t>(f[b] << 16 | f[b + 1] << 8 | f[b + 2]);
    }
    uint8_t syndrome() const { return f[bth() + 12]; }
    uint32_t icrc() const { return get32(f.data() + f.size() - 4); }
};

constexpr uint8_t OP_SEND_FIRST = 0x00, OP_SEND_MIDDLE = 0x01, OP_SEND_LAST = 0x02,
                  OP_SEND_ONLY = 0x04, OP_SEND_ONLY_IMM = 0x05,
                  OP_WRITE_ONLY = 0x0a, OP_READ_REQ = 0x0c,
                  OP_READ_RESP_ONLY = 0x10, OP_ACK = 0x11,
                  OP_UD_SEND_ONLY = 0x64;

struct Cqe32 {
    uint64_t wr_id;
    uint32_t len;
    uint8_t imm[4];
    uint32_t qpn;
    uint8_t op;
    uint8_t status;
    uint8_t flags;
    uint16_t wqe_idx;
    uint32_t src_qpn;
};

struct RoceRig : Rig {
    static constexpr uint32_t PAGE = 5;         // doorbell page of the tests
    std::vector<Pkt> wire;                      // every frame sent, in order
    std::function<bool(const Pkt &)> drop;      // true: lost on the wire
    bool loop = true;                           // deliver to the peer port

    struct Cq {
        uint32_t n = 0;
        uint64_t ring = 0, dbr = 0;
        uint32_t entries = 0, ci = 0;
    };
    struct Qp {
        uint32_t n = 0;
        uint8_t type = HPU_ROCE_QPT_RC;
        uint32_t sq_entries = 64, sq_stride = 256, rq_entries = 64, rq_stride = 128;
        uint64_t sq = 0, rq = 0, dbr = 0;
        uint32_t sq_pi = 0, rq_pi = 0;
        uint32_t cq = 0;
        uint32_t srq = 0;
    };
    struct Mr {
        uint32_t key = 0;
        uint64_t bus = 0;       // host bus address of byte 0
        uint64_t va = 0;        // what WQEs name
        uint64_t len = 0;
    };
    uint32_t next_mr = 1;

    RoceRig() : Rig(256 * MiB) { init(); }
    // A device of @o's making (the threaded environment of
    // hpu_thread_env.hpp, for tests that hold a DMA in another thread).
    explicit RoceRig(const DevOpts &o) : Rig(o) { init(); }
    void init()
    {
        env.roce_manual = true;
        for (unsigned int p = 0; p < 2; p++) {
            // The Ethernet receive ring must be valid for RX_EN (nic.md).
            uint64_t ring = host_addr(halloc(16 * HPU_NIC_DESC_SIZE, 64));
            wr(HPU_NIC_PORT_BASE(p) + HPU_NIC_MTU, 9000);
            wr(HPU_NIC_PORT_BASE(p) + HPU_NIC_RX_BASE_LO, static_cast<uint32_t>(ring));
            wr(HPU_NIC_PORT_BASE(p) + HPU_NIC_RX_BASE_HI, static_cast<uint32_t>(ring >> 32));
            wr(HPU_NIC_PORT_BASE(p) + HPU_NIC_RX_SIZE, 16);
            wr(HPU_NIC_PORT_BASE(p) + HPU_NIC_CTRL, HPU_NIC_CTRL_RX_EN);
            set_gid(p, 0, ip4(p));
            wr(HPU_ROCE_PORT_BASE(p) + HPU_ROCE_PORT_CTRL, HPU_ROCE_PORT_ENABLE);
        }
        wr(HPU_ROCE_BASE + HPU_ROCE_CTRL, HPU_ROCE_CTRL_ENABLE);
    }

    static Bytes ip4(unsigned int p)
    {
        Bytes g(16, 0);
        g[10] = g[11] = 0xff;
        g[12] = 192; g[13] = 0; g[14] = 2; g[15] = static_cast<uint8_t>(1 + p);
        return g;
    }
    static Bytes ip6(unsigned int p)
    {
        Bytes g(16, 0);
        g[0] = 0xfe; g[1] = 0x80; g[15] = static_cast<uint8_t>(1 + p);
        return g;
    }
    void set_gid(unsigned int p, unsigned int i, const Bytes &g)
    {
        uint64_t b = HPU_ROCE_PORT_BASE(p) + HPU_ROCE_PORT_GID(i);
        for (unsigned int w = 0; w < 4; w++) {
            wr(b + 4 * w, get32(g.data() + 4 * w));
        }
        wr(b + HPU_ROCE_PORT_GID_VALID_OFF, HPU_ROCE_PORT_GID_VALID);
    }
    uint32_t crd(uint32_t reg) { return rd(HPU_ROCE_BASE + reg); }
    void cwr(uint32_t reg, uint32_t v) { wr(HPU_ROCE_BASE + reg, v); }
    uint64_t counter(unsigned int p, unsigned int i)
    {
        uint32_t lo = rd(HPU_ROCE_PORT_BASE(p) + HPU_ROCE_PORT_CNT(i));
        return lo | static_cast<uint64_t>(
            rd(HPU_ROCE_PORT_BASE(p) + HPU_ROCE_PORT_CNT_HI(i))) << 32;
    }
    Bytes mac(unsigned int p)
    {
        Bytes m(6);
        hpum_core_nic_mac(&core.cfg, p, m.data());
        return m;
    }

    unsigned int runs = 0;                      // worker runs so far
    bool record = true;                         // keep frames in wire

    // One worker run (as QEMU's bottom half runs it, once per main loop
    // iteration), then the wire: whether anything moved.
    bool step()
    {
        if (env.roce_pending) {
            env.roce_pending = false;
            runs++;
            if (hpum_core_roce_step(&core)) {
                env.roce_pending = true;
            }
        }
        // Frames a port held (the engine's queue was full) and asked for
        // again (nic_rx_kick): offered again, as QEMU would.
        bool kicked = false;
        for (unsigned int p = 0; p < HPU_NIC_MAX_PORTS; p++) {
            kicked |= env.rx_pending[p];
        }
        if (kicked && !env.nic_manual) {
            nic_bh();
        }
        std::vector<Env::Frame> out;
        out.swap(env.sent);
        for (auto &fr : out) {
            Pkt k{ fr.port, fr.bytes };
            bool lost = drop && drop(k);
            if (record) {
                wire.push_back(k);
            }
            if (loop && !lost) {
                inject(fr.port ^ 1u, fr.bytes);
            }
        }
        return !out.empty() || env.roce_pending || kicked;
    }
    // The worker and the wire until nothing moves.
    void pump(unsigned int rounds = 10000)
    {
        for (unsigned int i = 0; i < rounds; i++) {
            if (!step()) {
                return;
            }
        }
        FAIL("the RoCE engine never went quiet");
    }
    // Let @ns of device time pass (timers fire), then pump.
    void wait(uint64_t ns)
    {
        advance(ns);
        pump();
    }

    // Commands
    int cmd(uint32_t op, uint32_t type, uint32_t index, const Bytes &img)
    {
        for (unsigned int w = 0; w < 64; w++) {
            cwr(HPU_ROCE_CMD_DATA(w), get32(img.data() + 4 * w));
        }
        cwr(HPU_ROCE_CMD_INDEX, index);
        cwr(HPU_ROCE_CMD, op | type << HPU_ROCE_CMD_TYPE_SHIFT);
        REQUIRE((crd(HPU_ROCE_CMD_STATUS) & HPU_ROCE_CMD_BUSY) != 0);
        pump();
        uint32_t st = crd(HPU_ROCE_CMD_STATUS);
        REQUIRE((st & HPU_ROCE_CMD_BUSY) == 0);
        return static_cast<int>((st & HPU_ROCE_CMD_RESULT_MASK) >>
                                HPU_ROCE_CMD_RESULT_SHIFT);
    }
    Bytes query(uint32_t type, uint32_t index)
    {
        REQUIRE(cmd(HPU_ROCE_OP_QUERY, type, index, Bytes(256)) == HPU_ROCE_RES_OK);
        Bytes d(256);
        for (unsigned int w = 0; w < 64; w++) {
            put32(d.data() + 4 * w, crd(HPU_ROCE_CMD_DATA(w)));
        }
        return d;
    }

    Bytes cq_image(Cq &c, uint32_t entries)
    {
        Bytes d(256);
        unsigned int log = 0;
        while ((1u << log) < entries) {
            log++;
        }
        c.entries = 1u << log;
        c.ring = halloc(32ull * c.entries, 64);
        c.dbr = halloc(8, 8);
        put16(&d[HPU_ROCE_CQ_ASID], 0);
        put16(&d[HPU_ROCE_CQ_DB_PAGE], PAGE);
        d[HPU_ROCE_CQ_LOG_ENTRIES] = static_cast<uint8_t>(log);
        put64(&d[HPU_ROCE_CQ_RING_ADDR], host_addr(c.ring));
        put64(&d[HPU_ROCE_CQ_DBR_ADDR], host_addr(c.dbr));
        return d;
    }
    Cq make_cq(uint32_t n, uint32_t entries = 64)
    {
        Cq c;
        c.n = n;
        REQUIRE(cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_CQ, n, cq_image(c, entries)) ==
                HPU_ROCE_RES_OK);
        return c;
    }
    Mr make_mr(uint64_t len, uint32_t access = 7, uint32_t pd = 1)
    {
        Mr m;
        uint32_t idx = next_mr++;
        Bytes d(256);
        m.key = idx << 8 | 0x5a;
        m.bus = halloc(len, 64);
        m.va = 0x7000000000ull + (static_cast<uint64_t>(idx) << 24);
        m.len = len;
        put32(&d[HPU_ROCE_MR_KEY], m.key);
        put32(&d[HPU_ROCE_MR_PD], pd);
        put32(&d[HPU_ROCE_MR_ACCESS], access);
        put64(&d[HPU_ROCE_MR_VA], m.va);
        put64(&d[HPU_ROCE_MR_LENGTH], len);
        put64(&d[HPU_ROCE_MR_DVA], host_addr(m.bus));
        REQUIRE(cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_MR, idx, d) == HPU_ROCE_RES_OK);
        return m;
    }
    static unsigned int lg(uint32_t v)
    {
        unsigned int l = 0;
        while ((1u << l) < v) {
            l++;
        }
        return l;
    }
    Bytes qp_image(Qp &q, uint32_t port)
    {
        Bytes d(256);
        q.sq = halloc(static_cast<uint64_t>(q.sq_entries) * q.sq_stride, q.sq_stride);
        q.rq = q.srq ? 0 : halloc(static_cast<uint64_t>(q.rq_entries) * q.rq_stride,
                                  q.rq_stride);
        q.dbr = halloc(8, 8);
        d[HPU_ROCE_QP_TYPE] = q.type;
        d[HPU_ROCE_QP_PORT] = static_cast<uint8_t>(port);
        d[HPU_ROCE_QP_MTU] = q.type == HPU_ROCE_QPT_UD ? 3 : 0;
        put16(&d[HPU_ROCE_QP_DB_PAGE], PAGE);
        put32(&d[HPU_ROCE_QP_PD], 1);
        put32(&d[HPU_ROCE_QP_SEND_CQ], q.cq);
        put32(&d[HPU_ROCE_QP_RECV_CQ], q.cq);
        put32(&d[HPU_ROCE_QP_SRQ], q.srq);
        d[HPU_ROCE_QP_SQ_LOG_ENTRIES] = static_cast<uint8_t>(lg(q.sq_entries));
        d[HPU_ROCE_QP_SQ_LOG_STRIDE] = static_cast<uint8_t>(lg(q.sq_stride));
        if (!q.srq) {
            d[HPU_ROCE_QP_RQ_LOG_ENTRIES] = static_cast<uint8_t>(lg(q.rq_entries));
            d[HPU_ROCE_QP_RQ_LOG_STRIDE] = static_cast<uint8_t>(lg(q.rq_stride));
            put64(&d[HPU_ROCE_QP_RQ_ADDR], host_addr(q.rq));
        }
        put64(&d[HPU_ROCE_QP_SQ_ADDR], host_addr(q.sq));
        put64(&d[HPU_ROCE_QP_DBR_ADDR], host_addr(q.dbr));
        return d;
    }
    int modify(uint32_t qpn, uint8_t state, uint32_t mask, Bytes d = Bytes(256))
    {
        d[HPU_ROCE_QP_STATE] = state;
        put32(&d[HPU_ROCE_QP_MASK], mask | HPU_ROCE_QPM_STATE);
        return cmd(HPU_ROCE_OP_MODIFY, HPU_ROCE_TYPE_QP, qpn, d);
    }
    // Bring RC QP @q on port @p to RTS towards QP @dqpn of the other port.
    void connect_rc(const Qp &q, unsigned int p, uint32_t dqpn, uint8_t mtu,
                    uint8_t timeout = 14, uint8_t retry = 7, uint8_t rnr = 7,
                    uint8_t min_rnr = 1)
    {
        Bytes d(256);
        d[HPU_ROCE_QP_PORT] = static_cast<uint8_t>(p);
        put32(&d[HPU_ROCE_QP_ACCESS], HPU_ROCE_ACCESS_REMOTE_WRITE |
                                      HPU_ROCE_ACCESS_REMOTE_READ);
        REQUIRE(modify(q.n, HPU_ROCE_QPS_INIT, HPU_ROCE_QPM_PORT |
                       HPU_ROCE_QPM_ACCESS_FLAGS, d) == HPU_ROCE_RES_OK);
        d[HPU_ROCE_QP_MTU] = mtu;
        put32(&d[HPU_ROCE_QP_DEST_QPN], dqpn);
        put32(&d[HPU_ROCE_QP_RQ_PSN], 0x100);
        d[HPU_ROCE_QP_MAX_DEST_RD_ATOMIC] = 4;
        d[HPU_ROCE_QP_MIN_RNR_TIMER] = min_rnr;
        d[HPU_ROCE_QP_SGID_INDEX] = 0;
        d[HPU_ROCE_QP_HOP_LIMIT] = 64;
        Bytes m = mac(p ^ 1u), g = ip4(p ^ 1u);
        std::memcpy(&d[HPU_ROCE_QP_DMAC], m.data(), 6);
        std::memcpy(&d[HPU_ROCE_QP_DGID], g.data(), 16);
        REQUIRE(modify(q.n, HPU_ROCE_QPS_RTR, HPU_ROCE_QPM_AV | HPU_ROCE_QPM_PATH_MTU |
                       HPU_ROCE_QPM_DEST_QPN | HPU_ROCE_QPM_RQ_PSN |
                       HPU_ROCE_QPM_MAX_DEST_RD_ATOMIC | HPU_ROCE_QPM_MIN_RNR_TIMER,
                       d) == HPU_ROCE_RES_OK);
        put32(&d[HPU_ROCE_QP_SQ_PSN], 0x100);
        d[HPU_ROCE_QP_TIMEOUT] = timeout;
        d[HPU_ROCE_QP_RETRY_CNT] = retry;
        d[HPU_ROCE_QP_RNR_RETRY] = rnr;
        d[HPU_ROCE_QP_MAX_RD_ATOMIC] = 4;
        REQUIRE(modify(q.n, HPU_ROCE_QPS_RTS, HPU_ROCE_QPM_SQ_PSN | HPU_ROCE_QPM_TIMEOUT |
                       HPU_ROCE_QPM_RETRY_CNT | HPU_ROCE_QPM_RNR_RETRY |
                       HPU_ROCE_QPM_MAX_QP_RD_ATOMIC, d) == HPU_ROCE_RES_OK);
    }
    Qp make_qp(uint32_t n, unsigned int port, uint32_t cq, uint8_t type = HPU_ROCE_QPT_RC)
    {
        Qp q;
        q.n = n;
        q.cq = cq;
        q.type = type;
        REQUIRE(cmd(HPU_ROCE_OP_CREATE, HPU_ROCE_TYPE_QP, n, qp_image(q, port)) ==
                HPU_ROCE_RES_OK);
        return q;
    }
    // A connected pair: QP @a on port 0, QP @b on port 1, CQs 1 and 2.
    struct Pair {
        Cq ca, cb;
        Qp a, b;
    };
    Pair pair(uint8_t mtu = 3, uint8_t timeout = 14, uint8_t retry = 7,
              uint8_t rnr = 7)
    {
        Pair p;
        p.ca = make_cq(1);
        p.cb = make_cq(2);
        p.a = make_qp(10, 0, 1);
        p.b = make_qp(20, 1, 2);
        connect_rc(p.a, 0, 20, mtu, timeout, retry, rnr);
        connect_rc(p.b, 1, 10, mtu, timeout, retry, rnr);
        return p;
    }

    // Posting
    struct Sge {
        uint64_t va;
        uint32_t len;
        uint32_t key;
    };
    void post_send(Qp &q, uint8_t op, uint64_t wr_id, const std::vector<Sge> &sges,
                   uint64_t raddr = 0, uint32_t rkey = 0, uint32_t imm = 0,
                   uint8_t flags = HPU_ROCE_WQE_SIGNALED, const uint8_t *av = nullptr,
                   uint32_t qkey = 0, uint32_t dqpn = 0)
    {
        Bytes w(q.sq_stride);
        w[HPU_ROCE_WQE_OPCODE] = op;
        w[HPU_ROCE_WQE_FLAGS] = flags;
        w[HPU_ROCE_WQE_NUM_SGE] = static_cast<uint8_t>(sges.size());
        put32(&w[HPU_ROCE_WQE_IMM], imm);
        put64(&w[HPU_ROCE_WQE_WR_ID], wr_id);
        size_t hdr = HPU_ROCE_WQE_HDR_SIZE;
        if (q.type == HPU_ROCE_QPT_UD) {
            put32(&w[HPU_ROCE_WQE_QKEY], qkey);
            put32(&w[HPU_ROCE_WQE_DEST_QPN], dqpn);
            if (av) {
                std::memcpy(&w[HPU_ROCE_WQE_AV], av, HPU_ROCE_AV_SIZE);
            }
            hdr += HPU_ROCE_AV_SIZE;
        } else if (op >= HPU_ROCE_WR_RDMA_WRITE) {
            put64(&w[HPU_ROCE_WQE_REMOTE_ADDR], raddr);
            put32(&w[HPU_ROCE_WQE_RKEY], rkey);
        }
        for (size_t i = 0; i < sges.size(); i++) {
            uint8_t *s = &w[hdr + 16 * i];
            put64(s, sges[i].va);
            put32(s + 8, sges[i].len);
            put32(s + 12, sges[i].key);
        }
        post_raw(q, w);
    }
    void post_raw(Qp &q, const Bytes &w)
    {
        hwrite(q.sq + static_cast<uint64_t>(q.sq_pi % q.sq_entries) * q.sq_stride,
               w.data(), w.size());
        q.sq_pi++;
        uint8_t b[4];
        put32(b, q.sq_pi);
        hwrite(q.dbr, b, 4);
        wr(HPU_ROCE_DB_PAGE(PAGE) + HPU_ROCE_DB_SQ_DB, q.n);
    }
    void post_recv(Qp &q, uint64_t wr_id, const std::vector<Sge> &sges)
    {
        Bytes w(q.rq_stride);
        put64(&w[0], wr_id);
        w[8] = static_cast<uint8_t>(sges.size());
        for (size_t i = 0; i < sges.size(); i++) {
            uint8_t *s = &w[16 + 16 * i];
            put64(s, sges[i].va);
            put32(s + 8, sges[i].len);
            put32(s + 12, sges[i].key);
        }
        hwrite(q.rq + static_cast<uint64_t>(q.rq_pi % q.rq_entries) * q.rq_stride,
               w.data(), w.size());
        q.rq_pi++;
        uint8_t b[4];
        put32(b, q.rq_pi);
        hwrite(q.dbr + 4, b, 4);
    }
    // The next CQE, if its owner bit says it is written.
    bool poll(Cq &c, Cqe32 &e)
    {
        const uint8_t *p = hp(c.ring + 32ull * (c.ci % c.entries));
        uint8_t want = ((c.ci / c.entries) & 1) ? 0 : 1;
        if ((p[31] & 1) != want) {
            return false;
        }
        e.wr_id = get64(p);
        e.len = get32(p + 8);
        std::memcpy(e.imm, p + 12, 4);
        e.qpn = get32(p + 16) & 0xffffff;
        e.op = p[19];
        e.status = p[20];
        e.flags = p[21];
        e.wqe_idx = static_cast<uint16_t>(p[22] | p[23] << 8);
        e.src_qpn = get32(p + 24);
        c.ci++;
        uint8_t b[4];
        put32(b, c.ci);
        hwrite(c.dbr, b, 4);
        return true;
    }
    Cqe32 poll1(Cq &c)
    {
        Cqe32 e{};
        REQUIRE(poll(c, e));
        return e;
    }
    uint8_t qp_state(uint32_t qpn) { return query(HPU_ROCE_TYPE_QP, qpn)[0]; }
    size_t count_ops(uint8_t op, unsigned int port)
    {
        size_t n = 0;
        for (auto &k : wire) {
            n += k.port == port && k.op() == op;
        }
        return n;
    }

    // Event ring
    uint64_t eq_bus = 0;
    uint32_t eq_n = 0, eq_ci = 0;
    void setup_roce_eq(uint32_t n = 64)
    {
        eq_bus = halloc(32ull * n, 64);
        eq_n = n;
        cwr(HPU_ROCE_EQ_LO, static_cast<uint32_t>(host_addr(eq_bus)));
        cwr(HPU_ROCE_EQ_HI, static_cast<uint32_t>(host_addr(eq_bus) >> 32));
        cwr(HPU_ROCE_EQ_SIZE, n);
        cwr(HPU_ROCE_EQ_CTRL, HPU_ROCE_EQ_ENABLE | HPU_ROCE_EQ_IRQ);
    }
    struct Ev {
        uint16_t type, port;
        uint32_t obj, cause;
    };
    std::vector<Ev> events()
    {
        std::vector<Ev> v;
        uint32_t pi = crd(HPU_ROCE_EQ_PI);
        for (; eq_ci != pi; eq_ci++) {
            const uint8_t *p = hp(eq_bus + 32ull * (eq_ci % eq_n));
            Ev e;
            std::memcpy(&e.type, p, 2);
            std::memcpy(&e.port, p + 2, 2);
            e.obj = get32(p + 4);
            e.cause = get32(p + 16);
            v.push_back(e);
        }
        cwr(HPU_ROCE_EQ_CI, eq_ci);
        return v;
    }
};

} // namespace hpu_test
