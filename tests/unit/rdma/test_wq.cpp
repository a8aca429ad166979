// SPDX-License-Identifier: MIT
// The verbs provider's ring layer (tools/rdma-provider/hpu/hpu_wq.c) on the
// host: WQEs checked byte by byte against Documentation/hw/roce.md, queue
// limits, and CQEs written by a fake device polled through wraparound.
// No kernel, no device, no libibverbs context: hpu_wq.c is built with
// HPU_WQ_HOST_TEST, which routes its barriers to hpu_wq_test_barrier().
//
// Copyright (c) 2026 The hpu authors
#include <catch2/catch_test_macros.hpp>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include <infiniband/verbs.h>

#include "hpu_wq.h"

namespace {

// What each barrier saw: its kind (0 from the device, 1 to the device, 2
// write-combining flush), the doorbell record word watched and the
// queue's software head watched (the poller's bound).
struct Barrier {
    int to_device;
    uint32_t watched;
    uint32_t head;
};
std::vector<Barrier> g_barriers;
const uint32_t *g_watch;
const uint32_t *g_watch_head;

uint32_t get32(const uint8_t *p)
{
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

uint64_t get64(const uint8_t *p)
{
    return uint64_t(get32(p)) | uint64_t(get32(p + 4)) << 32;
}

void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = uint8_t(v >> (8 * i));
}

void put64(uint8_t *p, uint64_t v)
{
    put32(p, uint32_t(v));
    put32(p + 4, uint32_t(v >> 32));
}

bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i])
            return false;
    }
    return true;
}

// A send queue over its own buffers, as hpu.c lays one out.
struct Sq {
    std::vector<uint8_t> buf;
    std::vector<uint8_t> signaled;
    uint32_t db[2] = {0xdeadbeef, 0};
    hpu_wq wq{};
    hpu_sq_batch b{};

    Sq(uint32_t log_entries, uint32_t log_stride, bool ud)
        : buf(size_t(1) << (log_entries + log_stride), 0xa5), signaled(size_t(1) << log_entries)
    {
        hpu_sq_init(&wq, buf.data(), log_entries, log_stride, ud, &db[0], signaled.data());
        db[0] = 0;
    }
    [[nodiscard]] const uint8_t *slot(uint32_t i) const { return static_cast<const uint8_t *>(hpu_wq_slot(&wq, i)); }
    int post(const ibv_send_wr &wr, const hpu_ib_ud_av *av = nullptr)
    {
        hpu_sq_batch_start(&wq, &b);
        int err = hpu_sq_post_wr(&wq, &b, wq.hdr > HPU_WQ_SEND_HDR, &wr, av);
        int cerr = hpu_sq_batch_commit(&wq, &b);
        return err ? err : cerr;
    }
};

ibv_send_wr make_wr(ibv_wr_opcode op, ibv_sge *sge, int num_sge, unsigned int flags = IBV_SEND_SIGNALED)
{
    ibv_send_wr wr{};
    wr.wr_id = 0x1122334455667788ULL;
    wr.opcode = op;
    wr.send_flags = flags;
    wr.sg_list = sge;
    wr.num_sge = num_sge;
    return wr;
}

// The fake device: writes CQE `index` of a ring as roce.md says, owner last.
struct Cq {
    std::vector<hpu_ib_cqe> ring;
    uint32_t db[2] = {0, 0};
    hpu_cq_ring cq{};
    uint32_t pi = 0;

    explicit Cq(uint32_t log_entries) : ring(size_t(1) << log_entries)
    {
        std::memset(ring.data(), 0, ring.size() * sizeof(hpu_ib_cqe));
        hpu_cq_init(&cq, ring.data(), log_entries, &db[0]);
    }
    // wqe_idx >= 0: a send CQE naming its WQE (flag WQE_IDX, bytes 22-23).
    void write(uint64_t wr_id, uint32_t qpn, uint8_t opcode, uint8_t status = 0, uint32_t len = 0,
               uint8_t flags = 0, uint32_t imm_wire = 0, uint32_t src_qp = 0,
               int32_t wqe_idx = -1)
    {
        auto n = uint32_t(ring.size());
        REQUIRE(pi - db[0] < n); // the device's own overflow rule
        auto *e = reinterpret_cast<uint8_t *>(&ring[pi & (n - 1)]);
        put64(e, wr_id);
        put32(e + 8, len);
        std::memcpy(e + 12, &imm_wire, 4);
        put32(e + 16, (qpn & 0xffffff) | uint32_t(opcode) << 24);
        e[20] = status;
        e[21] = uint8_t(flags | (wqe_idx >= 0 ? HPU_IB_CQE_F_WQE_IDX : 0));
        e[22] = uint8_t(wqe_idx >= 0 ? wqe_idx : 0);
        e[23] = uint8_t(wqe_idx >= 0 ? wqe_idx >> 8 : 0);
        put32(e + 24, src_qp);
        e[31] = uint8_t(((pi / n) & 1) ^ 1);
        pi++;
    }
    int poll(ibv_wc *wc, int ne)
    {
        int n = 0;
        while (n < ne && hpu_cq_next(&cq, &wc[n]))
            n++;
        if (n)
            hpu_cq_publish(&cq);
        return n;
    }
};

} // namespace

extern "C" void hpu_wq_test_barrier(int to_device)
{
    g_barriers.push_back({to_device, g_watch ? *g_watch : 0, g_watch_head ? *g_watch_head : 0});
}

TEST_CASE("rdma wq: a SEND WQE is the 64-byte header then its SGEs, little endian")
{
    Sq sq(3, 7, false);
    ibv_sge sge[2] = {{0x0102030405060708ULL, 0x11223344, 0xa1b2c3d4}, {0x1000, 16, 7}};
    ibv_send_wr wr = make_wr(IBV_WR_SEND, sge, 2, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_FENCE);
    REQUIRE(sq.post(wr) == 0);

    const uint8_t *w = sq.slot(0);
    CHECK(w[0] == HPU_IB_WQE_SEND);
    CHECK(w[1] == (HPU_IB_WQE_F_SIGNALED | HPU_IB_WQE_F_SOLICITED | HPU_IB_WQE_F_FENCE));
    CHECK(w[2] == 2);
    CHECK(w[3] == 0);
    CHECK(get32(w + 4) == 0);
    const uint8_t wrid[8] = {0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11};
    CHECK(std::memcmp(w + 8, wrid, 8) == 0);
    CHECK(all_zero(w + 16, 48)); // no remote address, key, QPN, inline length
    const uint8_t sge0[16] = {0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
                              0x44, 0x33, 0x22, 0x11, 0xd4, 0xc3, 0xb2, 0xa1};
    CHECK(std::memcmp(w + 64, sge0, 16) == 0);
    CHECK(get64(w + 80) == 0x1000);
    CHECK(get32(w + 88) == 16);
    CHECK(get32(w + 92) == 7);
    CHECK(sq.db[0] == 1);
    CHECK(sq.signaled[0] == 1);
}

TEST_CASE("rdma wq: each RC opcode carries its opcode, immediate and remote address")
{
    struct Case {
        ibv_wr_opcode op;
        uint8_t want;
        bool imm, rdma;
    };
    const Case cases[] = {
        {IBV_WR_SEND, HPU_IB_WQE_SEND, false, false},
        {IBV_WR_SEND_WITH_IMM, HPU_IB_WQE_SEND_IMM, true, false},
        {IBV_WR_RDMA_WRITE, HPU_IB_WQE_RDMA_WRITE, false, true},
        {IBV_WR_RDMA_WRITE_WITH_IMM, HPU_IB_WQE_RDMA_WRITE_IMM, true, true},
        {IBV_WR_RDMA_READ, HPU_IB_WQE_RDMA_READ, false, true},
    };
    Sq sq(3, 7, false);
    ibv_sge sge = {0x2000, 64, 9};
    uint32_t i = 0;
    for (const Case &c : cases) {
        ibv_send_wr wr = make_wr(c.op, &sge, 1, 0);
        const uint8_t imm_wire[4] = {0xde, 0xad, 0xbe, 0xef};
        std::memcpy(&wr.imm_data, imm_wire, 4);
        wr.wr.rdma.remote_addr = 0xfedcba9876543210ULL;
        wr.wr.rdma.rkey = 0x01020304;
        REQUIRE(sq.post(wr) == 0);
        const uint8_t *w = sq.slot(i++);
        CHECK(w[0] == c.want);
        CHECK(w[1] == 0); // unsignaled
        if (c.imm)
            CHECK(std::memcmp(w + 4, imm_wire, 4) == 0); // network order, as given
        if (c.rdma) {
            CHECK(get64(w + 16) == 0xfedcba9876543210ULL);
            const uint8_t rkey[4] = {0x04, 0x03, 0x02, 0x01};
            CHECK(std::memcmp(w + 24, rkey, 4) == 0);
        } else {
            CHECK(all_zero(w + 16, 12));
        }
        CHECK(all_zero(w + 28, 36));
        CHECK(get64(w + 64) == 0x2000);
    }
    CHECK(sq.db[0] == 5);
}

TEST_CASE("rdma wq: a UD SEND carries Q_Key, QPN and the 32-byte address vector before its SGEs")
{
    Sq sq(2, 7, true);
    hpu_ib_ud_av av{};
    const uint8_t mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
    std::memcpy(av.dmac, mac, 6);
    av.sgid_index = 3;
    av.hop_limit = 64;
    av.traffic_class = 0x28;
    av.flow_label = htole32(0x12345);
    for (int i = 0; i < 16; i++)
        av.dgid[i] = uint8_t(0xf0 + i);
    ibv_sge sge = {0x3000, 512, 0x55};
    ibv_send_wr wr = make_wr(IBV_WR_SEND, &sge, 1);
    wr.wr.ud.remote_qpn = 0x7abcdef; // bits above 23 are not a QPN's
    wr.wr.ud.remote_qkey = 0x11111111;
    REQUIRE(sq.post(wr, &av) == 0);

    const uint8_t *w = sq.slot(0);
    CHECK(w[0] == HPU_IB_WQE_SEND);
    CHECK(get32(w + 24) == 0x11111111);
    CHECK(get32(w + 28) == 0xabcdef);
    CHECK(all_zero(w + 32, 32));
    CHECK(std::memcmp(w + 64, mac, 6) == 0);
    CHECK(w[70] == 3);
    CHECK(w[71] == 64);
    CHECK(w[72] == 0x28);
    CHECK(all_zero(w + 73, 3));
    CHECK(get32(w + 76) == 0x12345);
    for (int i = 0; i < 16; i++)
        CHECK(w[80 + i] == 0xf0 + i);
    CHECK(get64(w + 96) == 0x3000);
    CHECK(get32(w + 104) == 512);
    CHECK(get32(w + 108) == 0x55);
}

TEST_CASE("rdma wq: a UD QP takes only SENDs, and only with an address vector")
{
    Sq sq(2, 7, true);
    ibv_sge sge = {0x3000, 8, 1};
    hpu_ib_ud_av av{};
    ibv_send_wr wr = make_wr(IBV_WR_RDMA_WRITE, &sge, 1);
    CHECK(sq.post(wr, &av) == EINVAL);
    wr.opcode = IBV_WR_SEND;
    CHECK(sq.post(wr, nullptr) == EINVAL);
    wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
    CHECK(sq.post(wr, &av) == EINVAL);
    CHECK(sq.db[0] == 0);
    CHECK(sq.wq.head == 0);
}

TEST_CASE("rdma wq: opcodes and flags the engine lacks are refused with EINVAL")
{
    Sq sq(2, 7, false);
    ibv_sge sge = {0x3000, 8, 1};
    for (ibv_wr_opcode op : {IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_LOCAL_INV,
                             IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV}) {
        ibv_send_wr wr = make_wr(op, &sge, 1);
        CHECK(sq.post(wr) == EINVAL);
    }
    ibv_send_wr wr = make_wr(IBV_WR_SEND, &sge, 1, IBV_SEND_SIGNALED | IBV_SEND_IP_CSUM);
    CHECK(sq.post(wr) == EINVAL);
    CHECK(sq.db[0] == 0);
}

TEST_CASE("rdma wq: inline data follows the header, up to the stride's room")
{
    SECTION("RC: stride - 64 bytes") {
        Sq sq(2, 7, false);
        REQUIRE(sq.wq.max_inline == 64);
        std::vector<uint8_t> data(64);
        for (size_t i = 0; i < data.size(); i++)
            data[i] = uint8_t(i * 3 + 1);
        ibv_sge sge[2] = {{uintptr_t(data.data()), 40, 0}, {uintptr_t(data.data() + 40), 24, 0}};
        ibv_send_wr wr = make_wr(IBV_WR_RDMA_WRITE, sge, 2, IBV_SEND_SIGNALED | IBV_SEND_INLINE);
        wr.wr.rdma.remote_addr = 0x4000;
        wr.wr.rdma.rkey = 5;
        REQUIRE(sq.post(wr) == 0);
        const uint8_t *w = sq.slot(0);
        CHECK(w[1] == (HPU_IB_WQE_F_SIGNALED | HPU_IB_WQE_F_INLINE));
        CHECK(w[2] == 0);
        CHECK(get32(w + 32) == 64);
        CHECK(all_zero(w + 36, 28));
        CHECK(std::memcmp(w + 64, data.data(), 64) == 0);

        sge[1].length = 25; // 65 bytes
        CHECK(sq.post(wr) == EINVAL);
        CHECK(sq.db[0] == 1);
    }
    SECTION("UD: the address vector comes first, stride - 96 bytes") {
        Sq sq(2, 7, true);
        REQUIRE(sq.wq.max_inline == 32);
        uint8_t data[33];
        std::memset(data, 0x3c, sizeof(data));
        hpu_ib_ud_av av{};
        av.hop_limit = 1;
        ibv_sge sge = {uintptr_t(data), 32, 0};
        ibv_send_wr wr = make_wr(IBV_WR_SEND, &sge, 1, IBV_SEND_INLINE);
        REQUIRE(sq.post(wr, &av) == 0);
        const uint8_t *w = sq.slot(0);
        CHECK(w[71] == 1);
        CHECK(get32(w + 32) == 32);
        CHECK(std::memcmp(w + 96, data, 32) == 0);
        sge.length = 33;
        CHECK(sq.post(wr, &av) == EINVAL);
    }
    SECTION("RDMA READ is never inline: post_send reads into its SGEs, wr_set_inline_data fails") {
        Sq sq(2, 7, false);
        ibv_sge sge = {0x5000, 8, 3};
        ibv_send_wr wr = make_wr(IBV_WR_RDMA_READ, &sge, 1, IBV_SEND_INLINE);
        REQUIRE(sq.post(wr) == 0);
        CHECK(sq.slot(0)[1] == 0);
        CHECK(sq.slot(0)[2] == 1);
        CHECK(get64(sq.slot(0) + 64) == 0x5000);

        hpu_sq_batch_start(&sq.wq, &sq.b);
        hpu_sq_wqe_start(&sq.wq, &sq.b, HPU_IB_WQE_RDMA_READ, 0, 1, 0);
        ibv_data_buf buf = {&sge, 4};
        hpu_sq_wqe_inline(&sq.wq, &sq.b, 1, &buf);
        CHECK(hpu_sq_batch_commit(&sq.wq, &sq.b) == EINVAL);
        CHECK(sq.db[0] == 1);
    }
    SECTION("a zero-length inline send is allowed") {
        Sq sq(2, 6, false);
        REQUIRE(sq.wq.max_inline == 0);
        ibv_send_wr wr = make_wr(IBV_WR_SEND, nullptr, 0, IBV_SEND_INLINE);
        REQUIRE(sq.post(wr) == 0);
        CHECK(sq.slot(0)[1] == HPU_IB_WQE_F_INLINE);
        CHECK(get32(sq.slot(0) + 32) == 0);
    }
}

TEST_CASE("rdma wq: more SGEs than the stride holds are refused with EINVAL")
{
    Sq sq(2, 7, false); // 128 bytes: 4 SGEs
    REQUIRE(sq.wq.max_sge == 4);
    ibv_sge sge[5] = {};
    ibv_send_wr wr = make_wr(IBV_WR_SEND, sge, 5);
    CHECK(sq.post(wr) == EINVAL);
    wr.num_sge = 4;
    CHECK(sq.post(wr) == 0);
    CHECK(sq.slot(0)[2] == 4);
    wr.num_sge = -1;
    CHECK(sq.post(wr) == EINVAL);

    Sq big(1, 10, false);
    CHECK(big.wq.max_sge == HPU_WQ_MAX_SGE); // 60 would fit; the engine takes 32
}

TEST_CASE("rdma wq: posting past the send queue's depth fails with ENOMEM until a completion frees slots")
{
    Sq sq(2, 7, false); // 4 entries
    ibv_sge sge = {0x1000, 8, 1};
    ibv_send_wr wr = make_wr(IBV_WR_SEND, &sge, 1, 0);
    for (int i = 0; i < 3; i++)
        REQUIRE(sq.post(wr) == 0);
    wr.send_flags = IBV_SEND_SIGNALED;
    REQUIRE(sq.post(wr) == 0);
    CHECK(sq.db[0] == 4);
    CHECK(sq.post(wr) == ENOMEM);
    CHECK(sq.db[0] == 4);

    // The signaled 4th WQE completes: the 3 unsignaled before it are done too.
    hpu_sq_completed(&sq.wq, IBV_WC_SUCCESS, 3);
    CHECK(sq.wq.tail == 4);
    for (int i = 0; i < 4; i++)
        CHECK(sq.post(wr) == 0);
    CHECK(sq.post(wr) == ENOMEM);
    CHECK(sq.db[0] == 8);
    CHECK(sq.slot(4) == sq.slot(0)); // wrapped onto the same slots
}

TEST_CASE("rdma wq: one ibv_post_send list keeps the WQEs before a bad one")
{
    Sq sq(2, 7, false);
    ibv_sge sge = {0x1000, 8, 1};
    ibv_send_wr w[3] = {make_wr(IBV_WR_SEND, &sge, 1), make_wr(IBV_WR_SEND, &sge, 1),
                        make_wr(IBV_WR_SEND, &sge, 9)};
    hpu_sq_batch_start(&sq.wq, &sq.b);
    CHECK(hpu_sq_post_wr(&sq.wq, &sq.b, false, &w[0], nullptr) == 0);
    CHECK(hpu_sq_post_wr(&sq.wq, &sq.b, false, &w[1], nullptr) == 0);
    CHECK(hpu_sq_post_wr(&sq.wq, &sq.b, false, &w[2], nullptr) == EINVAL);
    CHECK(hpu_sq_batch_commit(&sq.wq, &sq.b) == 0);
    CHECK(sq.db[0] == 2);
    CHECK(sq.wq.head == 2);
}

TEST_CASE("rdma wq: a wr_* batch publishes all its WQEs with one index store, or none after an error")
{
    Sq sq(3, 8, false);
    g_barriers.clear();
    g_watch = &sq.db[0];
    g_watch_head = &sq.wq.head;

    hpu_sq_batch_start(&sq.wq, &sq.b);
    for (uint64_t id = 1; id <= 3; id++) {
        hpu_sq_wqe_start(&sq.wq, &sq.b, HPU_IB_WQE_RDMA_WRITE, IBV_SEND_SIGNALED, id, 0);
        hpu_sq_wqe_rdma(&sq.b, 0x9000 + id, 77);
        hpu_sq_wqe_sge(&sq.wq, &sq.b, 12, 0x100 * id, 32);
    }
    CHECK(sq.db[0] == 0); // nothing visible before wr_complete
    REQUIRE(hpu_sq_batch_commit(&sq.wq, &sq.b) == 0);
    CHECK(sq.db[0] == 3);
    // A barrier to the device and a write-combining flush (the caller's
    // stores into an HBM mapping the WQEs name), taken while the record
    // still held the old index.
    REQUIRE(g_barriers.size() == 2);
    CHECK(g_barriers[0].to_device == 1);
    CHECK(g_barriers[1].to_device == 2);
    CHECK(g_barriers[0].watched == 0);
    CHECK(g_barriers[1].watched == 0);
    // ... and after the head moved: a completion the device writes as soon
    // as it sees the index frees its slot (polled before head moved, it
    // freed none and the slot was lost).
    CHECK(g_barriers[0].head == 3);
    CHECK(sq.wq.head == 3);
    CHECK(get64(sq.slot(2) + 8) == 3);
    CHECK(get64(sq.slot(2) + 16) == 0x9003);
    CHECK(get32(sq.slot(2) + 64 + 12) == 12);

    // An error in the middle drops the whole batch (wr_complete fails).
    hpu_sq_batch_start(&sq.wq, &sq.b);
    hpu_sq_wqe_start(&sq.wq, &sq.b, HPU_IB_WQE_SEND, 0, 4, 0);
    hpu_sq_wqe_sge(&sq.wq, &sq.b, 1, 0, 1);
    hpu_sq_wqe_start(&sq.wq, &sq.b, HPU_IB_WQE_SEND, 0, 5, 0);
    std::vector<ibv_sge> many(sq.wq.max_sge + 1);
    hpu_sq_wqe_sge_list(&sq.wq, &sq.b, many.size(), many.data());
    hpu_sq_wqe_start(&sq.wq, &sq.b, HPU_IB_WQE_SEND, 0, 6, 0);
    CHECK(hpu_sq_batch_commit(&sq.wq, &sq.b) == EINVAL);
    CHECK(sq.db[0] == 3);
    CHECK(sq.wq.head == 3);
    CHECK(g_barriers.size() == 2);

    // wr_abort: the batch is simply never committed; the next starts at the same slot.
    hpu_sq_batch_start(&sq.wq, &sq.b);
    CHECK(sq.b.next == 3);
    g_watch = nullptr;
    g_watch_head = nullptr;
}

TEST_CASE("rdma wq: the SGE list of a wr_* WQE replaces inline data set before it")
{
    Sq sq(2, 7, false);
    uint8_t data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    ibv_data_buf buf = {data, 8};
    hpu_sq_batch_start(&sq.wq, &sq.b);
    hpu_sq_wqe_start(&sq.wq, &sq.b, HPU_IB_WQE_SEND, 0, 1, 0);
    hpu_sq_wqe_inline(&sq.wq, &sq.b, 1, &buf);
    hpu_sq_wqe_sge(&sq.wq, &sq.b, 3, 0x10, 8);
    REQUIRE(hpu_sq_batch_commit(&sq.wq, &sq.b) == 0);
    CHECK(sq.slot(0)[1] == 0);
    CHECK(sq.slot(0)[2] == 1);
    CHECK(get32(sq.slot(0) + 32) == 0);
}

TEST_CASE("rdma wq: every send completion frees up to its WQE's index, errors after unsignaled WQEs too")
{
    Sq sq(2, 7, false); // 4 entries
    ibv_sge sge = {0x1000, 8, 1};
    ibv_send_wr wr = make_wr(IBV_WR_SEND, &sge, 1, 0);
    for (int i = 0; i < 4; i++)
        REQUIRE(sq.post(wr) == 0);
    // WQEs 0 and 1 (unsignaled) succeeded without CQEs; 2 failed: its
    // error CQE frees 0, 1 and 2 (the old model freed only one slot).
    hpu_sq_completed(&sq.wq, IBV_WC_RETRY_EXC_ERR, 2);
    CHECK(sq.wq.tail == 3);
    CHECK(sq.post(wr) == 0);
    CHECK(sq.post(wr) == 0);
    CHECK(sq.post(wr) == 0);
    CHECK(sq.post(wr) == ENOMEM);
    // Flushes, one per WQE, each naming its own index.
    for (uint32_t i = 3; i < 7; i++) {
        hpu_sq_completed(&sq.wq, IBV_WC_WR_FLUSH_ERR, int32_t(i));
        CHECK(sq.wq.tail == i + 1);
    }
    // An index outside what is outstanding (a stale or foreign CQE) frees nothing.
    hpu_sq_completed(&sq.wq, IBV_WC_WR_FLUSH_ERR, 6);
    CHECK(sq.wq.tail == 7);
    REQUIRE(sq.post(wr) == 0);
    hpu_sq_completed(&sq.wq, IBV_WC_SUCCESS, 9);
    CHECK(sq.wq.tail == 7);
    hpu_sq_completed(&sq.wq, IBV_WC_SUCCESS, 7);
    CHECK(sq.wq.tail == 8);
}

TEST_CASE("rdma wq: the 16-bit WQE index of a CQE names the right WQE past 2^16 posts")
{
    Sq sq(15, 7, false); // 32768 entries, the most there are
    ibv_sge sge = {0x1000, 8, 1};
    ibv_send_wr wr = make_wr(IBV_WR_SEND, &sge, 1, 0);
    uint32_t posted = 0;
    for (int round = 0; round < 5; round++) {
        while (sq.post(wr) == 0)
            posted++;
        CHECK(posted - sq.wq.tail == 32768);
        // The device finished all but the last 5; an error CQE at that WQE.
        uint32_t idx = posted - 6;
        hpu_sq_completed(&sq.wq, IBV_WC_LOC_PROT_ERR, int32_t(idx & 0xffff));
        CHECK(sq.wq.tail == idx + 1);
        hpu_sq_completed(&sq.wq, IBV_WC_WR_FLUSH_ERR, int32_t((posted - 1) & 0xffff));
        CHECK(sq.wq.tail == posted);
    }
    CHECK(posted > 0x10000 * 2);
}

TEST_CASE("rdma wq: without a WQE index error and flush completions free one send slot each")
{
    // A device that predates the index (no WQE_IDX flag: wqe_idx -1).
    Sq sq(2, 7, false);
    ibv_sge sge = {0x1000, 8, 1};
    ibv_send_wr wr = make_wr(IBV_WR_SEND, &sge, 1, 0);
    for (int i = 0; i < 4; i++)
        REQUIRE(sq.post(wr) == 0);
    hpu_sq_completed(&sq.wq, IBV_WC_RETRY_EXC_ERR, -1);
    CHECK(sq.wq.tail == 1);
    for (int i = 0; i < 5; i++) // one more than outstanding: the tail stops at the head
        hpu_sq_completed(&sq.wq, IBV_WC_WR_FLUSH_ERR, -1);
    CHECK(sq.wq.tail == 4);
    // A success with no signaled WQE outstanding frees everything posted.
    REQUIRE(sq.post(wr) == 0);
    hpu_sq_completed(&sq.wq, IBV_WC_SUCCESS, -1);
    CHECK(sq.wq.tail == 5);
}

TEST_CASE("rdma wq: the poller hands on each CQE's WQE index, -1 when it has none")
{
    Cq c(2);
    ibv_wc wc{};
    c.write(1, 5, IBV_WC_SEND, IBV_WC_REM_ACCESS_ERR, 0, 0, 0, 0, 0xbeef);
    c.write(2, 5, IBV_WC_RECV);
    REQUIRE(c.poll(&wc, 1) == 1);
    CHECK(c.cq.wqe_idx == 0xbeef);
    REQUIRE(c.poll(&wc, 1) == 1);
    CHECK(c.cq.wqe_idx == -1);
}

TEST_CASE("rdma wq: cleaning a CQ of a QP drops its CQEs and keeps the others in order")
{
    Cq c(3); // 8 entries
    ibv_wc wc[8];
    // Wrap once first, so the kept entries cross passes.
    for (int i = 0; i < 6; i++)
        c.write(100 + i, 7, IBV_WC_SEND);
    REQUIRE(c.poll(wc, 8) == 6);
    const uint32_t qpns[7] = {5, 7, 5, 5, 9, 7, 5};
    for (int i = 0; i < 7; i++)
        c.write(uint64_t(i), qpns[i], IBV_WC_RECV);
    g_barriers.clear();
    CHECK(hpu_cq_clean(&c.cq, 5) == 4);
    CHECK(c.cq.ci == 10);
    CHECK(c.db[0] == 10); // the freed slots handed back to the device
    CHECK(hpu_cq_clean(&c.cq, 5) == 0);
    REQUIRE(c.poll(wc, 8) == 3);
    CHECK(wc[0].wr_id == 1);
    CHECK(wc[0].qp_num == 7);
    CHECK(wc[1].wr_id == 4);
    CHECK(wc[1].qp_num == 9);
    CHECK(wc[2].wr_id == 5);
    CHECK(c.poll(wc, 8) == 0);
    // The ring goes on: the device writes into the freed room.
    for (int i = 0; i < 8; i++)
        c.write(uint64_t{200} + uint64_t(i), 9, IBV_WC_SEND);
    REQUIRE(c.poll(wc, 8) == 8);
    CHECK(wc[7].wr_id == 207);
    // Everything of one QP: the CQ ends empty; nothing of it: untouched.
    c.write(1, 3, IBV_WC_SEND);
    c.write(2, 3, IBV_WC_SEND);
    CHECK(hpu_cq_clean(&c.cq, 4) == 0);
    CHECK(hpu_cq_clean(&c.cq, 3) == 2);
    CHECK_FALSE(hpu_cq_pending(&c.cq));
    CHECK(c.poll(wc, 8) == 0);
}

TEST_CASE("rdma wq: a full CQ cleaned of a QP")
{
    Cq c(2); // 4 entries
    ibv_wc wc[4];
    c.write(1, 5, IBV_WC_SEND);
    c.write(2, 6, IBV_WC_SEND);
    c.write(3, 5, IBV_WC_SEND);
    c.write(4, 6, IBV_WC_SEND);
    CHECK(hpu_cq_clean(&c.cq, 5) == 2);
    c.write(5, 6, IBV_WC_SEND);
    c.write(6, 6, IBV_WC_SEND);
    REQUIRE(c.poll(wc, 4) == 4);
    CHECK(wc[0].wr_id == 2);
    CHECK(wc[1].wr_id == 4);
    CHECK(wc[2].wr_id == 5);
    CHECK(wc[3].wr_id == 6);
}

TEST_CASE("rdma wq: inline lengths whose sum wraps are refused")
{
    Sq sq(2, 7, false);
    uint8_t data[8] = {};
    ibv_data_buf bufs[2] = {{data, 8}, {data, SIZE_MAX - 7}}; // 8 + (2^64 - 8) wraps to 0
    hpu_sq_batch_start(&sq.wq, &sq.b);
    hpu_sq_wqe_start(&sq.wq, &sq.b, HPU_IB_WQE_SEND, 0, 1, 0);
    hpu_sq_wqe_inline(&sq.wq, &sq.b, 2, bufs);
    CHECK(hpu_sq_batch_commit(&sq.wq, &sq.b) == EINVAL);
    CHECK(sq.db[0] == 0);
}

TEST_CASE("rdma wq: a receive WQE is wr_id, SGE count, 7 reserved bytes, then the SGEs")
{
    std::vector<uint8_t> buf(size_t{4} * 64, 0xa5);
    uint32_t db[2] = {0, 0};
    hpu_wq rq{};
    hpu_rq_init(&rq, buf.data(), 2, 6, &db[1], nullptr);
    REQUIRE(rq.max_sge == 3);
    ibv_sge sge[3] = {{0xa0b0c0d0e0f00102ULL, 4096, 0x42}, {0x10, 1, 2}, {0x20, 2, 3}};
    ibv_recv_wr wr{};
    wr.wr_id = 0xcafef00d12345678ULL;
    wr.sg_list = sge;
    wr.num_sge = 3;
    uint32_t next = rq.head;
    g_barriers.clear();
    g_watch = &db[1];
    g_watch_head = &rq.head;
    REQUIRE(hpu_rq_post(&rq, &next, &wr) == 0);
    hpu_rq_publish(&rq, next);
    g_watch = nullptr;
    g_watch_head = nullptr;
    // As for a send batch: the record is the receive queue's doorbell.
    REQUIRE(g_barriers.size() == 2);
    CHECK(g_barriers[0].to_device == 1);
    CHECK(g_barriers[1].to_device == 2);
    CHECK(g_barriers[0].watched == 0);
    CHECK(g_barriers[1].watched == 0);
    CHECK(g_barriers[0].head == 1); // the poller's bound moved first
    CHECK(db[1] == 1);
    CHECK(db[0] == 0);

    const uint8_t *w = buf.data();
    CHECK(get64(w) == 0xcafef00d12345678ULL);
    CHECK(w[8] == 3);
    CHECK(all_zero(w + 9, 7));
    const uint8_t sge0[16] = {0x02, 0x01, 0xf0, 0xe0, 0xd0, 0xc0, 0xb0, 0xa0,
                              0x00, 0x10, 0x00, 0x00, 0x42, 0x00, 0x00, 0x00};
    CHECK(std::memcmp(w + 16, sge0, 16) == 0);
    CHECK(get64(w + 48) == 0x20);
    CHECK(get32(w + 56) == 2);
    CHECK(get32(w + 60) == 3);

    wr.num_sge = 4;
    CHECK(hpu_rq_post(&rq, &next, &wr) == EINVAL);
}

TEST_CASE("rdma wq: posting past the receive queue's depth fails with ENOMEM until receives complete")
{
    std::vector<uint8_t> buf(size_t{4} * 32);
    uint32_t db[2] = {0, 0};
    hpu_wq rq{};
    hpu_rq_init(&rq, buf.data(), 2, 5, &db[1], nullptr);
    ibv_sge sge = {0x10, 8, 1};
    ibv_recv_wr wr{};
    wr.sg_list = &sge;
    wr.num_sge = 1;
    uint32_t next = rq.head;
    for (int i = 0; i < 4; i++)
        REQUIRE(hpu_rq_post(&rq, &next, &wr) == 0);
    CHECK(hpu_rq_post(&rq, &next, &wr) == ENOMEM);
    hpu_rq_publish(&rq, next);
    hpu_rq_completed(&rq);
    CHECK(hpu_rq_post(&rq, &next, &wr) == 0);
    CHECK(hpu_rq_post(&rq, &next, &wr) == ENOMEM);
    hpu_rq_publish(&rq, next);
    CHECK(db[1] == 5);
}

TEST_CASE("rdma wq: an SRQ's room comes from the consumer index the device writes")
{
    std::vector<uint8_t> buf(size_t{2} * 32);
    uint32_t db[2] = {0, 0}; // producer (provider), consumer (device)
    hpu_wq srq{};
    hpu_rq_init(&srq, buf.data(), 1, 5, &db[0], &db[1]);
    ibv_recv_wr wr{};
    uint32_t next = srq.head;
    REQUIRE(hpu_rq_post(&srq, &next, &wr) == 0);
    REQUIRE(hpu_rq_post(&srq, &next, &wr) == 0);
    CHECK(hpu_rq_post(&srq, &next, &wr) == ENOMEM);
    hpu_rq_publish(&srq, next);
    db[1] = htole32(1); // the device took one
    CHECK(hpu_rq_post(&srq, &next, &wr) == 0);
    CHECK(hpu_rq_post(&srq, &next, &wr) == ENOMEM);
    hpu_rq_publish(&srq, next);
    CHECK(db[0] == 3);
}

TEST_CASE("rdma wq: queue geometry follows the capabilities asked, within the device's limits")
{
    uint32_t l = 0;
    CHECK(hpu_wq_log2_entries(0) == 1);
    CHECK(hpu_wq_log2_entries(2) == 1);
    CHECK(hpu_wq_log2_entries(3) == 2);
    CHECK(hpu_wq_log2_entries(500) == 9);
    CHECK(hpu_wq_log2_entries(32768) == 15);

    REQUIRE(hpu_sq_geometry(0, 0, false, &l) == 0);
    CHECK(l == 6);
    REQUIRE(hpu_sq_geometry(1, 0, false, &l) == 0);
    CHECK(l == 7);
    CHECK(hpu_sq_stride_max_sge(l, false) == 4);
    CHECK(hpu_sq_stride_max_inline(l, false) == 64);
    REQUIRE(hpu_sq_geometry(1, 0, true, &l) == 0);
    CHECK(l == 7);
    CHECK(hpu_sq_stride_max_sge(l, true) == 2);
    REQUIRE(hpu_sq_geometry(32, 0, true, &l) == 0);
    CHECK(l == 10);
    REQUIRE(hpu_sq_geometry(1, 960, false, &l) == 0);
    CHECK(l == 10);
    CHECK(hpu_sq_geometry(1, 961, false, &l) == EINVAL);
    CHECK(hpu_sq_geometry(1, 929, true, &l) == EINVAL);
    CHECK(hpu_sq_geometry(33, 0, false, &l) == EINVAL);

    REQUIRE(hpu_rq_geometry(1, false, &l) == 0);
    CHECK(l == 5);
    REQUIRE(hpu_rq_geometry(0, false, &l) == 0);
    CHECK(l == 5);
    REQUIRE(hpu_rq_geometry(31, true, &l) == 0);
    CHECK(l == 9);
    // RQ and SRQ strides alike up to 1024 (roce.md): 32 SGEs fit an SRQ.
    REQUIRE(hpu_rq_geometry(32, true, &l) == 0);
    CHECK(l == 10);
    CHECK(hpu_rq_geometry(33, true, &l) == EINVAL);
    REQUIRE(hpu_rq_geometry(32, false, &l) == 0);
    CHECK(l == 10);
    CHECK(hpu_rq_stride_max_sge(9) == 31);
}

TEST_CASE("rdma wq: a CQE becomes an ibv_wc field by field")
{
    Cq c(2);
    const uint8_t imm_wire[4] = {1, 2, 3, 4};
    uint32_t imm = 0;
    std::memcpy(&imm, imm_wire, 4);
    c.write(0xabcdef0123456789ULL, 0x123, IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_SUCCESS, 4096,
            HPU_IB_CQE_F_IMM, imm, 0);
    c.write(7, 0x45, IBV_WC_RECV, IBV_WC_SUCCESS, 552, HPU_IB_CQE_F_GRH, 0, 0xfedcba);
    c.write(8, 0x45, IBV_WC_SEND, IBV_WC_REM_ACCESS_ERR);

    ibv_wc wc[4];
    std::memset(wc, 0xff, sizeof(wc));
    REQUIRE(c.poll(wc, 4) == 3);
    CHECK(wc[0].wr_id == 0xabcdef0123456789ULL);
    CHECK(wc[0].status == IBV_WC_SUCCESS);
    CHECK(wc[0].opcode == IBV_WC_RECV_RDMA_WITH_IMM);
    CHECK(wc[0].qp_num == 0x123);
    CHECK(wc[0].byte_len == 4096);
    CHECK(wc[0].wc_flags == IBV_WC_WITH_IMM);
    CHECK(std::memcmp(&wc[0].imm_data, imm_wire, 4) == 0);
    CHECK(wc[0].vendor_err == 0);
    CHECK(wc[0].src_qp == 0);
    CHECK(wc[1].opcode == IBV_WC_RECV);
    CHECK(wc[1].wc_flags == IBV_WC_GRH);
    CHECK(wc[1].byte_len == 552);
    CHECK(wc[1].src_qp == 0xfedcba);
    CHECK(wc[1].pkey_index == 0);
    CHECK(wc[2].status == IBV_WC_REM_ACCESS_ERR);
    CHECK(wc[2].wr_id == 8);
    CHECK(wc[2].qp_num == 0x45);
    CHECK(c.db[0] == 3);
}

TEST_CASE("rdma wq: completions are polled by owner bit across many wraps, in partial batches")
{
    Cq c(3); // 8 entries
    ibv_wc wc[5];
    uint64_t expect = 0;
    uint64_t id = 0;
    // The device writes 1 to 8 entries at a time; the poller takes at most 5.
    for (int round = 0; round < 40; round++) {
        uint32_t room = 8 - (c.pi - c.db[0]);
        uint32_t n = 1 + uint32_t(round * 7) % room;
        for (uint32_t i = 0; i < n; i++)
            c.write(id++, 2, IBV_WC_RDMA_WRITE);
        while (true) {
            int got = c.poll(wc, 5);
            for (int i = 0; i < got; i++)
                CHECK(wc[i].wr_id == expect++);
            if (got < 5)
                break;
        }
        CHECK(c.db[0] == c.pi);
        CHECK_FALSE(hpu_cq_pending(&c.cq));
    }
    CHECK(expect == id);
    CHECK(id > uint64_t{8} * 4); // wrapped several times
}

TEST_CASE("rdma wq: an empty CQ reports nothing and leaves the consumer index alone")
{
    Cq c(1);
    ibv_wc wc{};
    g_barriers.clear();
    CHECK(c.poll(&wc, 1) == 0);
    CHECK(g_barriers.empty());
    // Stale entries of the previous pass (owner bit of that pass) are not new.
    c.write(1, 2, IBV_WC_SEND);
    c.write(2, 2, IBV_WC_SEND);
    REQUIRE(c.poll(&wc, 1) == 1);
    REQUIRE(c.poll(&wc, 1) == 1);
    CHECK(c.poll(&wc, 1) == 0);
    CHECK(c.cq.ci == 2);
}

TEST_CASE("rdma wq: each CQE is read after its owner bit and handed back after it was read")
{
    Cq c(2);
    c.write(1, 2, IBV_WC_SEND);
    c.write(2, 2, IBV_WC_SEND);
    g_barriers.clear();
    g_watch = &c.db[0];
    ibv_wc wc[2];
    REQUIRE(c.poll(wc, 2) == 2);
    g_watch = nullptr;
    // One read barrier per entry, one before the consumer index store.
    REQUIRE(g_barriers.size() == 3);
    for (const Barrier &b : g_barriers) {
        CHECK(b.to_device == 0);
        CHECK(b.watched == 0);
    }
    CHECK(c.db[0] == 2);
}
