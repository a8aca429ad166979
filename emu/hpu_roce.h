/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU device model: the RoCE v2 engine of spec version 7 part 2
 * (Documentation/hw/roce.md), internal to the core.  Its state is under
 * the core lock; the engine's worker (hpum_core_roce_step()) is the only
 * code that runs transport or command work, and drops the lock only
 * around memory accesses and frame hand-over (see device-model.md).
 *
 * Copyright (c) 2026 The hpu authors
 */
#ifndef HPU_ROCE_H
#define HPU_ROCE_H

#include "hpu_internal.h"

#define HPU_ROCE_WINDOW         16      /* send WQEs in flight per QP */
#define HPU_ROCE_RXQ            64      /* frames queued for the worker */
#define HPU_ROCE_DBQ            256     /* doorbells queued */
#define HPU_ROCE_FRAME_MAX      HPU_NIC_FRAME_BUF
#define HPU_ROCE_INLINE_MAX     1024
#define HPU_ROCE_OUTQ           64      /* frames queued before a hand-over */
#define HPU_ROCE_EVQ_LEN        32      /* events made, not yet written */
#define HPU_ROCE_POOL           128     /* frame buffers kept for reuse */
#define HPU_ROCE_RUN_PKTS       32      /* packets or CQEs a worker run makes */
#define HPU_ROCE_RUN_BYTES      (64 * 1024)     /* payload bytes a run sends */

typedef struct HpuRoceSge {
    uint64_t addr;
    uint32_t len;
    uint32_t lkey;
} HpuRoceSge;

/* A send WQE the requester took (kept until it completes). */
typedef struct HpuRoceSwqe {
    uint8_t op;
    uint8_t flags;
    uint8_t nsge;
    uint8_t imm[4];
    uint64_t wr_id;
    uint64_t raddr;
    uint32_t rkey;
    uint32_t qkey;
    uint32_t dqpn;
    uint8_t av[HPU_ROCE_AV_SIZE];
    uint32_t len;
    uint32_t first_psn;
    uint32_t npkts;
    uint32_t got;               /* RDMA READ: response packets received */
    bool acked;                 /* all its packets acknowledged */
    HpuRoceSge sge[HPU_ROCE_NUM_SGE];
    uint8_t inl[HPU_ROCE_INLINE_MAX];
} HpuRoceSwqe;

/* An RDMA READ the responder answers (one of its responder resources). */
typedef struct HpuRoceRdResp {
    uint64_t va;
    uint32_t rkey;
    uint32_t len;
    uint32_t psn;               /* of its first response packet */
    uint32_t npkts;
    uint32_t k;                 /* next packet to send */
} HpuRoceRdResp;

/* A receive WQE being filled by a multi-packet message. */
typedef struct HpuRoceRwqe {
    uint64_t wr_id;
    uint8_t nsge;
    HpuRoceSge sge[HPU_ROCE_NUM_SGE];
} HpuRoceRwqe;

typedef struct HpuRoceQp {
    bool used;
    uint8_t img[HPU_ROCE_IMAGE_SIZE];   /* configuration as loaded */
    uint8_t state;
    uint8_t type;
    uint8_t port;
    uint8_t cause;
    uint16_t asid;
    uint16_t dbp;
    uint32_t pd;
    uint32_t scq;
    uint32_t rcq;
    uint32_t srq;               /* SRQ + 1, 0 none */
    uint64_t cnt[HPU_ROCE_QPC_NUM];
    /* requester */
    uint32_t sq_ci;             /* WQEs completed */
    uint32_t sq_next;           /* next WQE to take */
    uint32_t cur;               /* WQE whose packets are being sent */
    uint32_t cur_pkt;           /* its next packet */
    uint32_t psn_next;
    uint32_t psn_una;           /* oldest unacknowledged */
    uint8_t retry_left;
    uint8_t rnr_left;
    bool sq_kick;               /* a doorbell: look at the SQ */
    bool flush;                 /* ERR: flush what is posted */
    bool rnr_wait;              /* waiting for the RNR timer */
    uint64_t deadline;          /* retransmit or RNR timer, 0 none */
    bool rd_retry;              /* rewound to a READ on an implied NAK */
    bool fail_set;              /* ERR: WQE fail_idx completes fail_st */
    uint8_t fail_st;
    uint32_t fail_idx;
    HpuRoceSwqe *win;           /* HPU_ROCE_WINDOW, by WQE index */
    /* responder */
    uint32_t rq_ci;
    uint32_t epsn;
    uint32_t msn;
    bool nak_sent;              /* one sequence NAK per gap */
    bool in_send;               /* a multi-packet SEND in progress */
    bool in_write;
    bool have_rwqe;
    HpuRoceRwqe rwqe;
    uint32_t rx_off;            /* bytes of the message so far */
    uint64_t wr_va;             /* WRITE: next remote VA */
    uint32_t wr_rkey;
    uint32_t wr_left;
    uint32_t wr_len;
    HpuRoceRdResp rd[HPU_ROCE_MAX_RD];  /* READs to answer, oldest first */
    uint8_t rd_head;
    uint8_t rd_n;
    bool ack_defer;             /* an ACK/NAK waits for the READ responses */
    uint8_t ack_syn;
    uint32_t ack_psn;
} HpuRoceQp;

typedef struct HpuRoceCq {
    bool used;
    bool error;
    bool arm_check;             /* CQ_ARM: look at the consumer index */
    uint8_t arm;
    uint8_t log;
    uint16_t asid;
    uint16_t dbp;
    uint64_t ring;
    uint64_t dbr;
    uint32_t pi;
} HpuRoceCq;

typedef struct HpuRoceSrq {
    bool used;
    uint8_t log;
    uint8_t lstride;
    uint16_t asid;
    uint16_t dbp;
    uint32_t pd;
    uint32_t limit;
    uint64_t ring;
    uint64_t dbr;
    uint32_t ci;
} HpuRoceSrq;

typedef struct HpuRoceMr {
    bool used;
    uint32_t key;
    uint32_t pd;
    uint16_t asid;
    uint32_t access;
    uint64_t va;
    uint64_t len;
    uint64_t dva;
} HpuRoceMr;

typedef struct HpuRocePort {
    uint32_t ctrl;
    uint32_t gid[HPU_ROCE_PORT_GIDS][4];
    uint32_t gid_valid[HPU_ROCE_PORT_GIDS];
    uint64_t cnt[HPU_ROCE_NUM_COUNTERS];
    uint32_t cnt_hi[HPU_ROCE_NUM_COUNTERS];
} HpuRocePort;

typedef struct HpuRoceFrame {
    unsigned int port;
    uint32_t len;
    uint8_t *buf;
} HpuRoceFrame;

typedef struct HpuRoce {
    uint32_t ctrl;
    uint32_t cmd;
    uint32_t cmd_index;
    uint32_t cmd_status;
    uint32_t cmd_done;
    bool cmd_pending;
    uint8_t data[HPU_ROCE_IMAGE_SIZE];
    uint64_t eq_base;
    uint32_t eq_size;
    uint32_t eq_pi;             /* entries written (published after the write) */
    uint32_t eq_ci;
    uint32_t eq_ctrl;
    uint32_t eq_dropped;
    /*
     * Events made but not yet written: one writer at a time (eq_writing)
     * writes them in order with the lock dropped, then advances eq_pi, so
     * EQ_PI never covers an entry still being written.  eq_epoch changes
     * when the ring restarts (enable, reset): a writer of an older epoch
     * stops and touches nothing.
     */
    uint8_t evq[HPU_ROCE_EVQ_LEN][HPU_ROCE_EQE_SIZE];
    unsigned int evq_head;
    unsigned int evq_count;
    bool eq_writing;
    unsigned int eq_xfers;      /* entry writes under way: EQ_CTRL.BUSY */
    uint32_t eq_epoch;
    /* events that left the queue: written, failed or dropped (free running) */
    uint32_t evq_done;
    /* CMD_STATUS reads BUSY until evq_done reaches this (events of the command's time) */
    uint32_t cmd_ev_mark;
    uint64_t db_refused;
    uint32_t db_refused_hi;
    uint32_t gen;               /* bumped when every object is destroyed */
    bool busy;                  /* the worker runs */
    uint32_t run_pkts;          /* what is left of the run's budget */
    uint32_t run_bytes;
    unsigned int qp_next;       /* the QP the next run starts with */
    bool wipe;                  /* destroy all once the worker stops */
    uint32_t dbq[HPU_ROCE_DBQ][2];      /* page << 1 | arm?, value */
    unsigned int dbq_n;
    HpuRoceFrame rxq[HPU_ROCE_RXQ];
    unsigned int rxq_head;
    unsigned int rxq_n;
    uint32_t rx_held;           /* ports holding a frame for a full rxq */
    HpuRoceFrame *outq;         /* frames to hand to the wire */
    unsigned int outq_n;
    unsigned int outq_cap;
    HpuRocePort port[HPU_NIC_MAX_PORTS];
    HpuRoceQp *qp[HPU_ROCE_NUM_QP];
    uint64_t qp_live[HPU_ROCE_NUM_QP / 64];     /* bit per qp[] entry set */
    bool arm_any;               /* some CQ's arm_check may be set */
    HpuRoceCq cq[HPU_ROCE_NUM_CQ];
    HpuRoceSrq srq[HPU_ROCE_NUM_SRQ];
    HpuRoceMr *mr;              /* HPU_ROCE_NUM_MR */
    uint8_t *pool[HPU_ROCE_POOL];       /* free frame buffers, FRAME_MAX bytes */
    unsigned int pool_n;
    uint8_t *pkt;               /* worker's frame buffer */
    uint8_t *bounce;            /* worker's payload buffer */
} HpuRoce;

extern const HpuBlock hpum_roce_block;
extern const HpuBlock hpum_roce_db_block;
bool hpum_roce_init(HpuCore *c);
void hpum_roce_fini(HpuCore *c);
/* Under the lock: every object destroyed, registers to reset values. */
void hpum_roce_reset(HpuCore *c);
/* Port RoCE registers (port block + 0x1000), from hpu_nic.c. */
HpuAccess hpum_roce_port_read(HpuCore *c, unsigned int p, uint32_t reg,
                              uint32_t *val);
HpuAccess hpum_roce_port_write(HpuCore *c, unsigned int p, uint32_t reg,
                               uint32_t val);
/* What hpum_roce_rx_steer() did with a frame. */
enum {
    HPU_ROCE_RX_NOT_ROCE,       /* not the engine's: the Ethernet path */
    HPU_ROCE_RX_TAKEN,          /* queued for the engine, or dropped */
    HPU_ROCE_RX_HOLD,           /* the engine's queue is full: the port holds
                                 * it (and those after it) until the engine
                                 * kicks the port's receive path again */
};

/*
 * Under the lock, from the port's receive path once part 1's rules
 * passed: whether the frame is RoCE for the engine (HPU_ROCE_RX_*).
 */
int hpum_roce_rx_steer(HpuCore *c, unsigned int p, const uint8_t *buf,
                       size_t len);
/* The port's link changed (under the lock). */
void hpum_roce_link(HpuCore *c, unsigned int p, bool up);
/* HPU_TMR_ROCE fired (under the lock). */
void hpum_roce_timer(HpuCore *c);
/* No worker step is in progress. */
bool hpum_roce_quiet(HpuCore *c);

/* hpu_nic.c: whether port @p may send a RoCE frame of @len bytes now. */
typedef enum HpuNicRoceTx {
    HPU_NIC_ROCE_SEND,
    HPU_NIC_ROCE_INJ_DROP,
    HPU_NIC_ROCE_DISCARD,
} HpuNicRoceTx;
HpuNicRoceTx hpum_nic_roce_tx(HpuCore *c, unsigned int p, uint32_t len);
/* The port's current MAC. */
void hpum_nic_cur_mac(HpuCore *c, unsigned int p, uint8_t mac[6]);

#endif /* HPU_ROCE_H */
