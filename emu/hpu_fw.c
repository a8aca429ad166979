/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * HPU device model: spec version 4 (Documentation/hw/
 * firmware-and-telemetry.md): the boot ROM (ROM_INIT, WAIT_IMAGE, the
 * verification of a signed image, BOOTING), the flash and the driver-to-
 * firmware mailbox.  The sensors and busy counters are in hpu_sensors.c.
 *
 * No firmware runs: what the firmware would do is modelled here from the
 * tables (LIMITS, CLOCKS, THERMAL) of the image the ROM accepted.
 *
 * Locking: register handlers and timers run under the core lock.  The MMIO
 * write of BOOT_CMD or FLASH_CMD only latches a job (HpuFwJob) and
 * kicks the boot ROM's worker; the worker (hpum_core_fw_step(), a thread of
 * its own in QEMU) takes the job under the lock, reads the image from the
 * host into a private buffer and verifies it (SHA-256, Ed25519) without the
 * lock, and records the result under the lock, where a generation number
 * discards it if a reset came between.  The result shows when the
 * verification time (a device timer) is over; a timer that finds no result
 * yet looks again HPU_FW_RETRY_NS later.  BOOT_CMD 2 verifies the flash
 * image it found at the command: the job holds a reference to it
 * (HpuFlashImg), so a flash write may replace it meanwhile.
 *
 * Plain C99, no QEMU headers: see hpu_core.h.  The image is parsed byte by
 * byte (little-endian) at the offsets of the structures in
 * include/hw/hpu_fw_image.h (HPU_FW_HDR_OFF), never through them, so the
 * host's endianness and alignment do not matter.
 *
 * Copyright (c) 2026 The hpu authors
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/eddsa.h>
#include <nettle/sha2.h>

#include "hpu_internal.h"

#define HPU_FW_RETRY_NS         100000  /* result not recorded yet */
#define HPU_MBOX_BLOCK_SIZE     (HPU_REG_MBOX_RESP1 + 4 - HPU_REG_MBOX_CMD)

static const char *const hpum_fw_err_names[] = { HPU_FW_REFUSAL_NAMES };

static const char *hpum_cpu_state_name(uint32_t s)
{
    static const char *const names[] = {
        "OFF", "BOOTING", "RUNNING", "HALTED", "ROM_INIT", "WAIT_IMAGE",
        "VERIFYING", "BOOT_FAILED",
    };

    return s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static uint16_t hpum_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/* A flash image buffer of @len bytes with one reference; NULL if no memory */
static HpuFlashImg *hpum_flash_img_new(uint32_t len)
{
    HpuFlashImg *img = malloc(sizeof(*img) + (len ? len : 1));

    if (img) {
        img->refs = 1;
        img->len = len;
        img->data = (uint8_t *)(img + 1);
    }
    return img;
}

/*
 * Drop a reference to @img (NULL: none); the last frees it.  Under the core
 * lock if the image may be shared.
 */
static void hpum_flash_img_put(HpuFlashImg *img)
{
    if (img && !--img->refs) {
        free(img);
    }
}

/* Verification */

#define REFUSE(code, ...) \
    do { \
        snprintf(why, whylen, __VA_ARGS__); \
        return (code); \
    } while (0)

static void hpum_fw_checksum(const uint8_t *img, uint32_t size,
                             uint8_t digest[SHA256_DIGEST_SIZE])
{
    static const uint8_t zero[HPU_FW_CHECKSUM_SIZE];
    struct sha256_ctx ctx;

    sha256_init(&ctx);
    sha256_update(&ctx, HPU_FW_CHECKSUM_OFFSET, img);
    sha256_update(&ctx, HPU_FW_CHECKSUM_SIZE, zero);
    sha256_update(&ctx, size - (HPU_FW_CHECKSUM_OFFSET + HPU_FW_CHECKSUM_SIZE),
                  img + HPU_FW_CHECKSUM_OFFSET + HPU_FW_CHECKSUM_SIZE);
    sha256_digest(&ctx, SHA256_DIGEST_SIZE, digest);
}

static uint32_t hpum_fw_limits(const uint8_t *p, uint32_t size,
                               HpuFwInfo *out, char *why,
                               size_t whylen)
{
    bool seen[HPU_NUM_LIMITS] = { false };
    uint32_t i, n = size / HPU_FW_LIMIT_SIZE;

    if (size % HPU_FW_LIMIT_SIZE) {
        REFUSE(HPU_FW_ERR_BAD_LAYOUT, "LIMITS size %u is not a multiple of "
               "%u", size, HPU_FW_LIMIT_SIZE);
    }
    for (i = 0; i < n; i++, p += HPU_FW_LIMIT_SIZE) {
        uint32_t id = hpum_le32(p), def = hpum_le32(p + 4);
        uint32_t min = hpum_le32(p + 8), max = hpum_le32(p + 12);

        if (id >= HPU_NUM_LIMITS) {
            REFUSE(HPU_FW_ERR_BAD_LAYOUT, "LIMITS entry %u: unknown limit "
                   "id %u", i, id);
        }
        if (seen[id]) {
            REFUSE(HPU_FW_ERR_BAD_LAYOUT, "LIMITS: limit id %u appears "
                   "twice", id);
        }
        if (min > def || def > max) {
            REFUSE(HPU_FW_ERR_BAD_LAYOUT, "LIMITS: limit id %u has min %u, "
                   "default %u, max %u: not min <= default <= max", id, min,
                   def, max);
        }
        seen[id] = true;
        out->limit[id].cur = out->limit[id].def = def;
        out->limit[id].min = min;
        out->limit[id].max = max;
    }
    for (i = 0; i < HPU_NUM_LIMITS; i++) {
        if (!seen[i]) {
            REFUSE(HPU_FW_ERR_BAD_LAYOUT, "LIMITS: limit id %u missing", i);
        }
    }
    return HPU_FW_ERR_NONE;
}

static uint32_t hpum_fw_clocks(const uint8_t *p, uint32_t size,
                               HpuFwInfo *out, char *why,
                               size_t whylen)
{
    uint32_t i, n = size / HPU_FW_CLOCK_SIZE;

    if (size % HPU_FW_CLOCK_SIZE || n < 1 || n > HPU_FW_MAX_CLOCKS) {
        REFUSE(HPU_FW_ERR_BAD_LAYOUT, "CLOCKS size %u: 1 to %u entries of "
               "%u bytes expected", size, HPU_FW_MAX_CLOCKS,
               HPU_FW_CLOCK_SIZE);
    }
    for (i = 0; i < n; i++, p += HPU_FW_CLOCK_SIZE) {
        out->clk_mhz[i] = hpum_le32(p);
        out->clk_mv[i] = hpum_le32(p + 4);
        if (!out->clk_mhz[i] ||
            (i && out->clk_mhz[i] <= out->clk_mhz[i - 1])) {
            REFUSE(HPU_FW_ERR_BAD_LAYOUT, "CLOCKS level %u: %u MHz is not "
                   "above the previous level (levels ascend from 1 MHz)", i,
                   out->clk_mhz[i]);
        }
    }
    out->nclocks = n;
    return HPU_FW_ERR_NONE;
}

static uint32_t hpum_fw_thermal(const uint8_t *p, uint32_t size,
                                HpuFwInfo *out, char *why,
                                size_t whylen)
{
    static const char *const names[] = {
        "ambient_mc", "rth_mc_per_w", "tau_ms", "idle_mw", "engine_mw",
        "hbm_mhz", "hbm_mv", "hysteresis_mc", "period_ms",
    };
    uint32_t v[HPU_FW_THERMAL_SIZE / 4], i;

    if (size != HPU_FW_THERMAL_SIZE) {
        REFUSE(HPU_FW_ERR_BAD_LAYOUT, "THERMAL size %u, not %u", size,
               HPU_FW_THERMAL_SIZE);
    }
    for (i = 0; i < HPU_FW_THERMAL_SIZE / 4; i++) {
        v[i] = hpum_le32(p + 4 * i);
        if (!v[i]) {
            REFUSE(HPU_FW_ERR_BAD_LAYOUT, "THERMAL %s is zero", names[i]);
        }
    }
    if (v[8] > 1000) {
        REFUSE(HPU_FW_ERR_BAD_LAYOUT, "THERMAL period_ms %u is above 1000",
               v[8]);
    }
    out->thermal.ambient_mc = v[0];
    out->thermal.rth_mc_per_w = v[1];
    out->thermal.tau_ms = v[2];
    out->thermal.idle_mw = v[3];
    out->thermal.engine_mw = v[4];
    out->thermal.hbm_mhz = v[5];
    out->thermal.hbm_mv = v[6];
    out->thermal.hysteresis_mc = v[7];
    out->thermal.period_ms = v[8];
    return HPU_FW_ERR_NONE;
}

/* The section table and the required sections (BAD_LAYOUT). */
static uint32_t hpum_fw_layout(const uint8_t *img, uint32_t image_size,
                               uint32_t nsec, HpuFwInfo *out,
                               char *why, size_t whylen)
{
    uint32_t off[HPU_FW_MAX_SECTIONS], size[HPU_FW_MAX_SECTIONS];
    int where[HPU_FW_SECT_THERMAL + 1];
    uint32_t i, j, table_end, r;

    if (nsec < 1 || nsec > HPU_FW_MAX_SECTIONS) {
        REFUSE(HPU_FW_ERR_BAD_LAYOUT, "num_sections %u, not 1 to %u", nsec,
               HPU_FW_MAX_SECTIONS);
    }
    for (i = 0; i <= HPU_FW_SECT_THERMAL; i++) {
        where[i] = -1;
    }
    table_end = HPU_FW_HEADER_SIZE + nsec * HPU_FW_SECTION_SIZE;
    for (i = 0; i < nsec; i++) {
        const uint8_t *s = img + HPU_FW_HEADER_SIZE + i * HPU_FW_SECTION_SIZE;
        uint32_t type = hpum_le32(s);

        off[i] = hpum_le32(s + 4);
        size[i] = hpum_le32(s + 8);
        if (hpum_le32(s + 12)) {
            REFUSE(HPU_FW_ERR_BAD_LAYOUT, "section %u: reserved field not "
                   "zero", i);
        }
        if (off[i] % 8) {
            REFUSE(HPU_FW_ERR_BAD_LAYOUT, "section %u: offset 0x%x not "
                   "8-byte aligned", i, off[i]);
        }
        /* an empty section too starts inside [table_end, image_size) */
        if (off[i] < table_end || off[i] >= image_size ||
            size[i] > image_size - off[i]) {
            REFUSE(HPU_FW_ERR_BAD_LAYOUT, "section %u: [0x%x, +0x%x) not "
                   "inside the signed region after the section table "
                   "[0x%x, 0x%x)", i, off[i], size[i], table_end,
                   image_size);
        }
        if (type < HPU_FW_SECT_INFO || type > HPU_FW_SECT_THERMAL) {
            REFUSE(HPU_FW_ERR_BAD_LAYOUT, "section %u: unknown type %u", i,
                   type);
        }
        if (where[type] >= 0) {
            REFUSE(HPU_FW_ERR_BAD_LAYOUT, "section %u: type %u appears "
                   "twice", i, type);
        }
        where[type] = (int)i;
        for (j = 0; j < i; j++) {
            /* empty sections share no byte with anything */
            if (size[i] && size[j] && off[i] < off[j] + size[j] &&
                off[j] < off[i] + size[i]) {
                REFUSE(HPU_FW_ERR_BAD_LAYOUT, "sections %u and %u overlap",
                       j, i);
            }
        }
    }
    if (where[HPU_FW_SECT_LIMITS] < 0 || where[HPU_FW_SECT_CLOCKS] < 0 ||
        where[HPU_FW_SECT_THERMAL] < 0) {
        REFUSE(HPU_FW_ERR_BAD_LAYOUT, "a required section is missing "
               "(LIMITS %s, CLOCKS %s, THERMAL %s)",
               where[HPU_FW_SECT_LIMITS] < 0 ? "missing" : "present",
               where[HPU_FW_SECT_CLOCKS] < 0 ? "missing" : "present",
               where[HPU_FW_SECT_THERMAL] < 0 ? "missing" : "present");
    }
    i = (uint32_t)where[HPU_FW_SECT_LIMITS];
    r = hpum_fw_limits(img + off[i], size[i], out, why, whylen);
    if (r) {
        return r;
    }
    i = (uint32_t)where[HPU_FW_SECT_CLOCKS];
    r = hpum_fw_clocks(img + off[i], size[i], out, why, whylen);
    if (r) {
        return r;
    }
    i = (uint32_t)where[HPU_FW_SECT_THERMAL];
    return hpum_fw_thermal(img + off[i], size[i], out, why, whylen);
}

uint32_t hpum_fw_verify(const uint8_t *img, uint64_t len, uint64_t declared,
                        const uint8_t *key, uint32_t min_version,
                        HpuFwInfo *out, uint32_t *stored,
                        char *why, size_t whylen)
{
    uint8_t digest[SHA256_DIGEST_SIZE];
    uint32_t version, image_size, nsec, flags, trailer, i;
    uint16_t format, hdr_size;
    const uint8_t *sig;

    memset(out, 0, sizeof(*out));
    *stored = 0;
    if (len < HPU_FW_HEADER_SIZE) {
        REFUSE(HPU_FW_ERR_BAD_MAGIC, "%llu bytes provided, fewer than the "
               "%u-byte header", (unsigned long long)len, HPU_FW_HEADER_SIZE);
    }
    if (hpum_le32(img + HPU_FW_HDR_OFF(magic)) != HPU_FW_MAGIC) {
        REFUSE(HPU_FW_ERR_BAD_MAGIC, "magic 0x%08x, not 0x%08x",
               hpum_le32(img + HPU_FW_HDR_OFF(magic)), HPU_FW_MAGIC);
    }
    version = hpum_le32(img + HPU_FW_HDR_OFF(fw_version));
    image_size = hpum_le32(img + HPU_FW_HDR_OFF(image_size));
    nsec = hpum_le32(img + HPU_FW_HDR_OFF(num_sections));
    flags = hpum_le32(img + HPU_FW_HDR_OFF(flags));
    format = hpum_le16(img + HPU_FW_HDR_OFF(format_version));
    hdr_size = hpum_le16(img + HPU_FW_HDR_OFF(header_size));
    if (format != HPU_FW_FORMAT_VERSION) {
        REFUSE(HPU_FW_ERR_BAD_FORMAT, "format_version %u, not %u",
               format, HPU_FW_FORMAT_VERSION);
    }
    if (hdr_size != HPU_FW_HEADER_SIZE) {
        REFUSE(HPU_FW_ERR_BAD_FORMAT, "header_size %u, not %u",
               hdr_size, HPU_FW_HEADER_SIZE);
    }
    if (flags & ~HPU_FW_FLAG_SIGNED) {
        REFUSE(HPU_FW_ERR_BAD_FORMAT, "flags 0x%08x: undefined bits set",
               flags);
    }
    for (i = 0; i < (HPU_FW_HEADER_SIZE - HPU_FW_HDR_OFF(reserved)); i++) {
        if (img[HPU_FW_HDR_OFF(reserved) + i]) {
            REFUSE(HPU_FW_ERR_BAD_FORMAT, "reserved header byte %u not "
                   "zero", HPU_FW_HDR_OFF(reserved) + i);
        }
    }
    if (version >> 24) {
        REFUSE(HPU_FW_ERR_BAD_FORMAT, "fw_version 0x%08x: bits 31:24 not "
               "zero", version);
    }
    trailer = flags & HPU_FW_FLAG_SIGNED ? HPU_FW_SIG_SIZE : 0;
    if ((uint64_t)image_size + trailer > HPU_FW_MAX_SIZE ||
        declared > HPU_FW_MAX_SIZE) {
        REFUSE(HPU_FW_ERR_TOO_LARGE, "image_size %u (+%u trailer), "
               "FW_IMG_SIZE %llu: more than %u bytes", image_size, trailer,
               (unsigned long long)declared, HPU_FW_MAX_SIZE);
    }
    if (len < (uint64_t)image_size + trailer) {
        REFUSE(HPU_FW_ERR_TRUNCATED, "%llu bytes provided, image_size %u "
               "plus a %u-byte trailer needed", (unsigned long long)len,
               image_size, trailer);
    }
    if (image_size < HPU_FW_HEADER_SIZE +
        (uint64_t)HPU_MIN(nsec, HPU_FW_MAX_SECTIONS) * HPU_FW_SECTION_SIZE) {
        REFUSE(HPU_FW_ERR_TRUNCATED, "image_size %u is smaller than the "
               "header and a table of %u sections", image_size, nsec);
    }
    hpum_fw_checksum(img, image_size, digest);
    if (memcmp(digest, img + HPU_FW_CHECKSUM_OFFSET, HPU_FW_CHECKSUM_SIZE)) {
        REFUSE(HPU_FW_ERR_CORRUPT, "the SHA-256 of the %u-byte signed "
               "region does not match the checksum field", image_size);
    }
    if (!(flags & HPU_FW_FLAG_SIGNED)) {
        REFUSE(HPU_FW_ERR_UNSIGNED, "the image is not signed (flags bit 0 "
               "clear)");
    }
    if (!key) {
        REFUSE(HPU_FW_ERR_NO_KEY, "no public key is fused into the device "
               "(property fw-pubkey)");
    }
    sig = img + image_size;
    if (hpum_le32(sig) != HPU_FW_SIG_MAGIC) {
        REFUSE(HPU_FW_ERR_BAD_SIGNATURE, "signature trailer magic 0x%08x, "
               "not 0x%08x", hpum_le32(sig), HPU_FW_SIG_MAGIC);
    }
    if (hpum_le32(sig + 4) != HPU_FW_SIG_ED25519) {
        REFUSE(HPU_FW_ERR_BAD_SIGNATURE, "signature algorithm %u, not %u "
               "(Ed25519)", hpum_le32(sig + 4), HPU_FW_SIG_ED25519);
    }
    if (!ed25519_sha512_verify(key, image_size, img,
                               sig + HPU_FW_SIG_OFF(signature))) {
        REFUSE(HPU_FW_ERR_BAD_SIGNATURE, "the Ed25519 signature does not "
               "verify with the fused key");
    }
    if (version < min_version) {
        REFUSE(HPU_FW_ERR_TOO_OLD, "fw_version 0x%06x is below "
               "FW_MIN_VERSION 0x%06x", version, min_version);
    }
    i = hpum_fw_layout(img, image_size, nsec, out, why, whylen);
    if (i) {
        return i;
    }
    out->version = version;
    memcpy(out->build, img + HPU_FW_HDR_OFF(build), HPU_FW_BUILD_LEN);
    *stored = image_size + trailer;
    snprintf(why, whylen, "accepted");
    return HPU_FW_ERR_NONE;
}

bool hpum_core_parse_fw_key(const char *hex, HpuCoreConfig *cfg,
                            char *err, size_t errlen)
{
    size_t i, len = hex ? strlen(hex) : 0;

    cfg->fw_key_set = false;
    memset(cfg->fw_key, 0, sizeof(cfg->fw_key));
    if (!len) {
        return true;
    }
    if (len != 2 * HPU_FW_PUBKEY_SIZE) {
        if (err) {
            snprintf(err, errlen, "fw-pubkey has %zu characters: an "
                     "Ed25519 public key is %u hex digits", len,
                     2 * HPU_FW_PUBKEY_SIZE);
        }
        return false;
    }
    for (i = 0; i < len; i++) {
        char ch = hex[i];
        unsigned int v;

        if (ch >= '0' && ch <= '9') {
            v = (unsigned int)(ch - '0');
        } else if (ch >= 'a' && ch <= 'f') {
            v = (unsigned int)(ch - 'a' + 10);
        } else if (ch >= 'A' && ch <= 'F') {
            v = (unsigned int)(ch - 'A' + 10);
        } else {
            if (err) {
                snprintf(err, errlen, "fw-pubkey has a character that is not "
                         "a hex digit at position %zu", i);
            }
            return false;
        }
        cfg->fw_key[i / 2] = (uint8_t)(cfg->fw_key[i / 2] << 4 | v);
    }
    cfg->fw_key_set = true;
    return true;
}

/* Mailbox */

static void hpum_mbox_answer(HpuCore *c)
{
    HpuMbox *m = &c->mbox;
    HpuFwInfo *fw = &c->rom.fw;
    uint32_t op = m->req_cmd & HPU_MBOX_OPCODE_MASK, id = m->req_arg0;
    uint32_t r = HPU_MBOX_OK, r0 = 0, r1 = 0;

    switch (op) {
    case HPU_MBOX_GET_LIMIT:
    case HPU_MBOX_SET_LIMIT:
    case HPU_MBOX_GET_LIMIT_RANGE:
        if (id >= HPU_NUM_LIMITS) {
            r = HPU_MBOX_BAD_ARG;
        } else if (op == HPU_MBOX_GET_LIMIT) {
            r0 = fw->limit[id].cur;
            r1 = fw->limit[id].def;
        } else if (op == HPU_MBOX_GET_LIMIT_RANGE) {
            r0 = fw->limit[id].min;
            r1 = fw->limit[id].max;
        } else if (m->req_arg1 < fw->limit[id].min ||
                   m->req_arg1 > fw->limit[id].max) {
            r = HPU_MBOX_BAD_ARG;
        } else {
            r0 = fw->limit[id].cur = m->req_arg1;
        }
        break;
    case HPU_MBOX_GET_CLOCK:
        if (id >= fw->nclocks) {
            r = HPU_MBOX_BAD_ARG;
        } else {
            r0 = fw->clk_mhz[id];
            r1 = fw->clk_mv[id];
        }
        break;
    case HPU_MBOX_GET_INFO:
        r0 = fw->nclocks;
        r1 = fw->version;
        break;
    default:
        r = HPU_MBOX_BAD_OPCODE;
        break;
    }
    m->resp0 = r0;
    m->resp1 = r1;
    m->status = HPU_MBOX_DONE | r << HPU_MBOX_RESULT_SHIFT |
                (m->req_cmd & ~0xffffu);
    hpum_misc_cause(c, HPU_IRQ_MBOX_DONE);
}

static HpuAccess hpum_mbox_read(HpuCore *c, uint32_t offset,
                                uint32_t *val)
{
    switch (offset) {
    case HPU_REG_MBOX_CMD:
        *val = c->mbox.cmd;
        break;
    case HPU_REG_MBOX_ARG0:
        *val = c->mbox.arg0;
        break;
    case HPU_REG_MBOX_ARG1:
        *val = c->mbox.arg1;
        break;
    case HPU_REG_MBOX_STATUS:
        *val = c->mbox.status;
        break;
    case HPU_REG_MBOX_RESP0:
        *val = c->mbox.resp0;
        break;
    case HPU_REG_MBOX_RESP1:
        *val = c->mbox.resp1;
        break;
    default:
        return HPU_ACCESS_UNMAPPED;
    }
    return HPU_ACCESS_OK;
}

static HpuAccess hpum_mbox_write(HpuCore *c, uint32_t offset,
                                 uint32_t val)
{
    HpuMbox *m = &c->mbox;

    switch (offset) {
    case HPU_REG_MBOX_CMD:
        if (m->status & HPU_MBOX_BUSY) {
            HPU_LOG(c, "MBOX_CMD written with 0x%08x while the request 0x%08x "
                    "is still BUSY: ignored", val, m->req_cmd);
            break;
        }
        m->cmd = m->req_cmd = val;
        m->req_arg0 = m->arg0;
        m->req_arg1 = m->arg1;
        m->resp0 = m->resp1 = 0;
        m->status = HPU_MBOX_BUSY | (val & ~0xffffu);
        if (hpum_cpu_running(c)) {
            hpum_timer_arm(c, HPU_TMR_MBOX, HPU_MBOX_ANSWER_NS);
        }
        break;
    case HPU_REG_MBOX_ARG0:
        m->arg0 = val;
        break;
    case HPU_REG_MBOX_ARG1:
        m->arg1 = val;
        break;
    case HPU_REG_MBOX_STATUS:
    case HPU_REG_MBOX_RESP0:
    case HPU_REG_MBOX_RESP1:
        return HPU_ACCESS_READ_ONLY;
    default:
        return HPU_ACCESS_UNMAPPED;
    }
    return HPU_ACCESS_OK;
}

const HpuBlock hpum_mbox_block = {
    .name = "mbox",
    .base = HPU_REG_MBOX_CMD,
    .size = HPU_MBOX_BLOCK_SIZE,
    .read = hpum_mbox_read,
    .write = hpum_mbox_write,
};

/* Boot ROM and flash registers */

/* Under the lock: drop a job that was latched but not taken. */
static void hpum_fw_job_drop(HpuFwJob *job)
{
    hpum_flash_img_put(job->flash);
    memset(job, 0, sizeof(*job));
}

static void hpum_boot_cmd(HpuCore *c, uint32_t cmd)
{
    HpuRom *rom = &c->rom;

    if (cmd != HPU_BOOT_HOST && cmd != HPU_BOOT_FLASH) {
        HPU_LOG(c, "BOOT_CMD written with %u: 1 (BOOT_HOST) or 2 "
                "(BOOT_FLASH) expected", cmd);
        return;
    }
    if (c->cpu.status != HPU_CPU_WAIT_IMAGE &&
        c->cpu.status != HPU_CPU_BOOT_FAILED) {
        HPU_LOG(c, "BOOT_CMD %u while CPU_STATUS is %s: accepted in "
                "WAIT_IMAGE and BOOT_FAILED only, ignored", cmd,
                hpum_cpu_state_name(c->cpu.status));
        return;
    }
    c->cpu.status = HPU_CPU_VERIFYING;
    rom->boot_error = HPU_FW_ERR_NONE;
    rom->gen++;
    rom->verified = false;
    hpum_fw_job_drop(&rom->job);
    rom->job.gen = rom->gen;
    if (cmd == HPU_BOOT_HOST) {
        rom->job.kind = HPU_FW_JOB_BOOT_HOST;
        rom->job.addr = rom->img_addr;
        rom->job.size = rom->img_size;
    } else if (!c->flash.img) {
        HPU_LOG(c, "BOOT_CMD 2 (BOOT_FLASH): the flash holds no image: "
                "refused NO_IMAGE");
        rom->verified = true;
        rom->result = HPU_FW_ERR_NO_IMAGE;
    } else {
        /* the image of now, even if a flash write replaces it meanwhile */
        rom->job.kind = HPU_FW_JOB_BOOT_FLASH;
        rom->job.flash = c->flash.img;
        c->flash.img->refs++;
    }
    if (rom->job.kind != HPU_FW_JOB_NONE) {
        c->ops->kick_fw(c->opaque);
    }
    hpum_timer_arm(c, HPU_TMR_ROM, HPU_FW_VERIFY_NS);
}

static void hpum_flash_cmd(HpuCore *c, uint32_t cmd)
{
    HpuFlash *fl = &c->flash;

    if (cmd != HPU_FLASH_WRITE) {
        HPU_LOG(c, "FLASH_CMD written with %u: 1 (WRITE) expected", cmd);
        return;
    }
    if (c->cpu.status == HPU_CPU_OFF) {
        HPU_LOG(c, "FLASH_CMD while the management CPU is OFF: ignored");
        return;
    }
    if (fl->status == HPU_FLASH_BUSY) {
        HPU_LOG(c, "FLASH_CMD while a flash write is in progress: ignored");
        return;
    }
    fl->status = HPU_FLASH_BUSY;
    fl->error = HPU_FW_ERR_NONE;
    fl->gen++;
    fl->verified = false;
    hpum_fw_job_drop(&fl->job);
    fl->job.kind = HPU_FW_JOB_FLASH_WRITE;
    fl->job.addr = c->rom.img_addr;
    fl->job.size = c->rom.img_size;
    fl->job.gen = fl->gen;
    c->ops->kick_fw(c->opaque);
    hpum_timer_arm(c, HPU_TMR_FLASH, HPU_FLASH_WRITE_NS);
}

HpuAccess hpum_rom_read(HpuCore *c, uint32_t offset,
                        uint32_t *val)
{
    HpuRom *rom = &c->rom;

    switch (offset) {
    case HPU_REG_BOOT_CMD:
    case HPU_REG_FLASH_CMD:
        *val = 0;               /* write-only */
        break;
    case HPU_REG_BOOT_ERROR:
        *val = rom->boot_error;
        break;
    case HPU_REG_FW_IMG_ADDR_LO:
        *val = (uint32_t)rom->img_addr;
        break;
    case HPU_REG_FW_IMG_ADDR_HI:
        *val = (uint32_t)(rom->img_addr >> 32);
        break;
    case HPU_REG_FW_IMG_SIZE:
        *val = rom->img_size;
        break;
    case HPU_REG_FW_VERSION:
        *val = rom->loaded ? rom->fw.version : 0;
        break;
    case HPU_REG_FW_MIN_VERSION:
        *val = c->cfg.fw_min_version;
        break;
    case HPU_REG_FLASH_VERSION:
        *val = c->flash.version;
        break;
    case HPU_REG_FLASH_STATUS:
        *val = c->flash.status;
        break;
    case HPU_REG_FLASH_ERROR:
        *val = c->flash.error;
        break;
    default:
        if (offset >= HPU_REG_FW_BUILD(0) &&
            offset <= HPU_REG_FW_BUILD(HPU_FW_BUILD_LEN / 4 - 1)) {
            *val = rom->loaded ?
                   hpum_le32(rom->fw.build + (offset - HPU_REG_FW_BUILD(0))) :
                   0;
            break;
        }
        return HPU_ACCESS_UNMAPPED;
    }
    return HPU_ACCESS_OK;
}

HpuAccess hpum_rom_write(HpuCore *c, uint32_t offset,
                         uint32_t val)
{
    HpuRom *rom = &c->rom;
    uint32_t dummy;

    switch (offset) {
    case HPU_REG_BOOT_CMD:
        hpum_boot_cmd(c, val);
        break;
    case HPU_REG_FW_IMG_ADDR_LO:
        rom->img_addr = (rom->img_addr & 0xffffffff00000000ULL) | val;
        break;
    case HPU_REG_FW_IMG_ADDR_HI:
        rom->img_addr = (rom->img_addr & 0xffffffffULL) | (uint64_t)val << 32;
        break;
    case HPU_REG_FW_IMG_SIZE:
        rom->img_size = val;
        break;
    case HPU_REG_FLASH_CMD:
        hpum_flash_cmd(c, val);
        break;
    default:
        if (hpum_rom_read(c, offset, &dummy) == HPU_ACCESS_OK) {
            return HPU_ACCESS_READ_ONLY;
        }
        return HPU_ACCESS_UNMAPPED;
    }
    return HPU_ACCESS_OK;
}

/* Reading and verifying images: the boot ROM's worker */

bool hpum_core_fw_ready(HpuCore *c)
{
    return c->rom.job.kind != HPU_FW_JOB_NONE ||
           c->flash.job.kind != HPU_FW_JOB_NONE || hpum_scrub_ready(c) ||
           c->hbm.clear_job;
}

/*
 * Without the lock: the image read, counted in flight so that resets wait
 * for it; a reset since the job was taken fails it (its result is dropped
 * anyway).
 */
static bool hpum_fw_dma_read(HpuCore *c, const HpuFwJob *job,
                             uint8_t *buf, uint64_t len)
{
    int r;

    hpum_lock(c);
    if (!hpum_dma_begin(c, job->epoch)) {
        hpum_unlock(c);
        return false;
    }
    hpum_unlock(c);
    r = c->ops->dma_read(c->opaque, job->addr, buf, len);
    hpum_lock(c);
    hpum_dma_end(c, job->epoch);
    hpum_unlock(c);
    return !r;
}

/* Without the lock: read the image of @job (unless BOOT_FLASH), verify it. */
static uint32_t hpum_fw_run_job(HpuCore *c,
                                const HpuFwJob *job,
                                HpuFlashImg **bufp,
                                HpuFwInfo *info)
{
    const char *what = job->kind == HPU_FW_JOB_FLASH_WRITE ?
                       "FLASH_CMD 1 (WRITE)" :
                       job->kind == HPU_FW_JOB_BOOT_HOST ?
                       "BOOT_CMD 1 (BOOT_HOST)" : "BOOT_CMD 2 (BOOT_FLASH)";
    HpuFlashImg *buf = NULL;
    const uint8_t *img = NULL;
    uint64_t len, declared;
    uint32_t result = HPU_FW_ERR_NONE, stored = 0;
    char why[200] = "";

    memset(info, 0, sizeof(*info));
    if (job->kind == HPU_FW_JOB_BOOT_FLASH) {
        img = job->flash->data;
        len = declared = job->flash->len;
    } else {
        /* One read of FW_IMG_SIZE bytes (at most what an image can be). */
        declared = job->size;
        len = HPU_MIN(declared, (uint64_t)HPU_FW_MAX_SIZE);
        buf = hpum_flash_img_new((uint32_t)len);
        if (!buf) {
            result = HPU_FW_ERR_DMA_ERROR;
            snprintf(why, sizeof(why), "out of host memory for the image");
        } else if (len && !hpum_fw_dma_read(c, job, buf->data, len)) {
            result = HPU_FW_ERR_DMA_ERROR;
            snprintf(why, sizeof(why), "reading %llu bytes at bus address "
                     "0x%llx failed", (unsigned long long)len,
                     (unsigned long long)job->addr);
        } else {
            img = buf->data;
        }
    }
    if (!result) {
        result = hpum_fw_verify(img, len, declared,
                                c->cfg.fw_key_set ? c->cfg.fw_key : NULL,
                                c->cfg.fw_min_version, info, &stored, why,
                                sizeof(why));
    }
    if (result) {
        HPU_LOG(c, "%s: image refused %s (%u): %s", what,
                hpum_fw_err_names[result], result, why);
    } else if (buf) {
        buf->len = stored;      /* the trailer in, bytes beyond it out */
    }
    *bufp = buf;
    return result;
}

bool hpum_core_fw_step(HpuCore *c)
{
    HpuFlashImg *buf;
    HpuFwJob job;
    HpuFwInfo info;
    uint32_t result;

    hpum_lock(c);
    if (c->rom.job.kind != HPU_FW_JOB_NONE) {
        job = c->rom.job;
        memset(&c->rom.job, 0, sizeof(c->rom.job));
    } else if (c->flash.job.kind != HPU_FW_JOB_NONE) {
        job = c->flash.job;
        memset(&c->flash.job, 0, sizeof(c->flash.job));
    } else {
        hpum_unlock(c);
        return hpum_hbm_clear_step(c) || hpum_scrub_step(c);
    }
    job.epoch = c->epoch;
    hpum_unlock(c);

    /* The reference in job.flash keeps a BOOT_FLASH image alive. */
    result = hpum_fw_run_job(c, &job, &buf, &info);

    hpum_lock(c);
    if (job.kind == HPU_FW_JOB_FLASH_WRITE) {
        HpuFlash *fl = &c->flash;

        if (job.gen == fl->gen && fl->status == HPU_FLASH_BUSY) {
            fl->verified = true;
            fl->result = result;
            if (!result) {
                fl->pending = buf;
                fl->pending_version = info.version;
                buf = NULL;
            }
        }
    } else if (job.gen == c->rom.gen &&
               c->cpu.status == HPU_CPU_VERIFYING) {
        /* else a reset overtook the job: its result is dropped */
        c->rom.verified = true;
        c->rom.result = result;
        c->rom.pending = info;
    }
    hpum_flash_img_put(job.flash);
    hpum_unlock(c);
    hpum_flash_img_put(buf);     /* never shared: no lock needed */
    return true;
}

/* Timers, boot and reset */

void hpum_fw_running(HpuCore *c)
{
    hpum_sensor_start(c);
    if (c->mbox.status & HPU_MBOX_BUSY) {
        hpum_timer_arm(c, HPU_TMR_MBOX, HPU_MBOX_ANSWER_NS);
    }
}

void hpum_fw_stopped(HpuCore *c)
{
    hpum_timer_cancel(c, HPU_TMR_SENSOR);
    hpum_timer_cancel(c, HPU_TMR_MBOX);
}

static void hpum_rom_timer(HpuCore *c)
{
    HpuRom *rom = &c->rom;

    switch (c->cpu.status) {
    case HPU_CPU_ROM_INIT:
        c->cpu.status = HPU_CPU_WAIT_IMAGE;
        break;
    case HPU_CPU_VERIFYING:
        if (!rom->verified) {
            hpum_timer_arm(c, HPU_TMR_ROM, HPU_FW_RETRY_NS);
            break;
        }
        if (rom->result) {
            c->cpu.status = HPU_CPU_BOOT_FAILED;
            rom->boot_error = rom->result;
            hpum_misc_cause(c, HPU_IRQ_FW_BOOT);
            break;
        }
        rom->boot_error = HPU_FW_ERR_NONE;
        rom->fw = rom->pending;
        rom->loaded = true;
        hpum_cpu_start(c);
        break;
    default:
        break;
    }
}

static void hpum_flash_timer(HpuCore *c)
{
    HpuFlash *fl = &c->flash;

    if (fl->status != HPU_FLASH_BUSY) {
        return;
    }
    if (!fl->verified) {
        hpum_timer_arm(c, HPU_TMR_FLASH, HPU_FW_RETRY_NS);
        return;
    }
    if (fl->result) {
        fl->status = HPU_FLASH_FAILED;
        fl->error = fl->result;
    } else {
        /* a BOOT_CMD 2 still verifying the old image keeps a reference */
        hpum_flash_img_put(fl->img);
        fl->img = fl->pending;
        fl->version = fl->pending_version;
        fl->pending = NULL;
        fl->status = HPU_FLASH_DONE;
        fl->error = HPU_FW_ERR_NONE;
    }
    hpum_misc_cause(c, HPU_IRQ_FLASH_DONE);
}

void hpum_fw_timer(HpuCore *c, HpuTimerId id)
{
    switch (id) {
    case HPU_TMR_ROM:
        hpum_rom_timer(c);
        break;
    case HPU_TMR_FLASH:
        hpum_flash_timer(c);
        break;
    case HPU_TMR_MBOX:
        if ((c->mbox.status & HPU_MBOX_BUSY) && hpum_cpu_running(c)) {
            hpum_mbox_answer(c);
        }
        break;
    case HPU_TMR_SENSOR:
        if (hpum_cpu_running(c)) {
            hpum_sensor_period(c);
        }
        break;
    default:
        break;
    }
}

/*
 * The power-on FLASH_VERSION: the header's fw_version field if the content
 * starts with the image magic and holds that field, even if it is shorter
 * than a header; else 0.
 */
static uint32_t hpum_flash_version_of(const uint8_t *p, uint32_t len)
{
    if (len < HPU_FW_HDR_OFF(fw_version) + 4 ||
        hpum_le32(p + HPU_FW_HDR_OFF(magic)) != HPU_FW_MAGIC) {
        return 0;
    }
    return hpum_le32(p + HPU_FW_HDR_OFF(fw_version));
}

static void hpum_flash_abandon(HpuCore *c)
{
    HpuFlash *fl = &c->flash;

    fl->gen++;
    fl->verified = false;
    hpum_fw_job_drop(&fl->job);
    hpum_flash_img_put(fl->pending);
    fl->pending = NULL;
}

/*
 * INJ_FLASH (BAR0 + 0x3018): flip bit 0 of the first byte after the section
 * table of the stored image.  The image is shared (a BOOT_CMD 2 verifying
 * it holds a reference and reads it outside the lock), so a copy with the
 * bit flipped replaces it; FLASH_VERSION stays (the header is intact).
 */
void hpum_fw_inj_flash(HpuCore *c, uint32_t val)
{
    HpuFlash *fl = &c->flash;
    HpuFlashImg *old = fl->img, *img;
    uint32_t image_size, nsec;
    uint64_t off;

    if (val != HPU_INJ_FLASH_CORRUPT) {
        HPU_LOG(c, "INJ_FLASH written with %u: 1 (corrupt the flash image) "
                "expected", val);
        return;
    }
    if (!old) {
        HPU_LOG(c, "INJ_FLASH: the flash is empty: nothing corrupted");
        return;
    }
    if (old->len < HPU_FW_HEADER_SIZE) {
        image_size = nsec = 0;
    } else {
        image_size = hpum_le32(old->data + HPU_FW_HDR_OFF(image_size));
        nsec = hpum_le32(old->data + HPU_FW_HDR_OFF(num_sections));
    }
    off = HPU_FW_HEADER_SIZE + (uint64_t)nsec * HPU_FW_SECTION_SIZE;
    if (old->len < HPU_FW_HEADER_SIZE || off >= image_size ||
        image_size > old->len) {
        HPU_LOG(c, "INJ_FLASH: the flash content (%u bytes) has no byte "
                "after a section table inside its signed region: nothing "
                "corrupted", old->len);
        return;
    }
    img = hpum_flash_img_new(old->len);
    if (!img) {
        HPU_LOG(c, "INJ_FLASH: out of host memory: nothing corrupted");
        return;
    }
    memcpy(img->data, old->data, old->len);
    img->data[off] ^= 1;
    fl->img = img;
    hpum_flash_img_put(old);     /* a verifying BOOT_CMD 2 may keep it */
}

void hpum_fw_reset(HpuCore *c, HpuResetKind kind)
{
    HpuRom *rom = &c->rom;
    uint32_t gen = rom->gen;

    if (kind == HPU_RESET_SOFT) {
        return;                 /* the soft reset touches none of this */
    }
    hpum_fw_job_drop(&rom->job);
    memset(rom, 0, sizeof(*rom));
    rom->gen = gen + 1;         /* a verification in progress is dropped */
    memset(&c->mbox, 0, sizeof(c->mbox));
    hpum_sensors_reset(c, kind);
    if (kind == HPU_RESET_POWER_ON) {
        hpum_flash_abandon(c);
        c->flash.status = HPU_FLASH_IDLE;
        c->flash.error = HPU_FW_ERR_NONE;
    } else if (c->flash.status == HPU_FLASH_BUSY) {
        HPU_LOG(c, "hard reset during a flash write: write abandoned, the "
                "flash keeps its old image");
        hpum_flash_abandon(c);
        c->flash.status = HPU_FLASH_FAILED;
        c->flash.error = HPU_FW_ERR_DMA_ERROR;
    }
}

bool hpum_fw_init(HpuCore *c)
{
    const uint8_t *src = c->cfg.fw_flash;
    uint32_t len = c->cfg.fw_flash_len;

    c->cfg.fw_flash = NULL;     /* the caller's buffer: copied, not kept */
    if (!len) {
        return true;
    }
    if (len > HPU_FW_MAX_SIZE || !src) {
        return false;
    }
    c->flash.img = hpum_flash_img_new(len);
    if (!c->flash.img) {
        return false;
    }
    memcpy(c->flash.img->data, src, len);
    c->flash.version = hpum_flash_version_of(src, len);
    return true;
}

void hpum_fw_fini(HpuCore *c)
{
    hpum_fw_job_drop(&c->rom.job);
    hpum_fw_job_drop(&c->flash.job);
    hpum_flash_img_put(c->flash.img);
    c->flash.img = NULL;
    hpum_flash_img_put(c->flash.pending);
    c->flash.pending = NULL;
}
