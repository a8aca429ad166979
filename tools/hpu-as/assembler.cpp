// SPDX-License-Identifier: MIT
//
// The TPC assembler: lines, directives, macros, includes, expressions and
// the encoding of one instruction (the syntax is Documentation/hpu-as.md).
// Two passes over the same expansion: the first only counts bundles and
// places labels, the second encodes and reports every error.
//
// Copyright (c) 2026 The hpu authors
#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <utility>

#include "tpcasm.h"

namespace hpu::tpc
{

std::string Diagnostic::str() const
{
    return file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": error: " + message;
}

std::string Result::error_text() const
{
    std::string t;
    for (const auto &e : errors)
        t += e.str() + "\n";
    return t;
}

namespace
{

constexpr unsigned kMaxDepth = 64; // nested includes and macro expansions
// Lines processed in a pass, macro bodies and included files counted each
// time they are expanded: macros calling each other twice per level, or
// files including each other twice, would expand without bound otherwise.
constexpr size_t kMaxLines = 1000000;
constexpr unsigned kMaxExprDepth = 256; // nested parentheses and unary operators

// An error at a column (0-based offset into the line's text).
struct LineError {
    size_t col;
    std::string msg;
};

struct Val {
    bool fp = false;   // a floating-point value (f)
    bool bits = false; // bits(x): raw FP32 bits in i
    int64_t i = 0;
    double f = 0;
};

bool ident_start(char c)
{
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$';
}

bool ident_char(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$';
}

std::string_view trim(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

// A piece of a line: its text and where it starts in the line.
struct Piece {
    std::string_view text;
    size_t col;
};

Piece trim(Piece p)
{
    std::string_view t = p.text;
    size_t lead = 0;
    while (lead < t.size() && std::isspace(static_cast<unsigned char>(t[lead])))
        lead++;
    return {trim(t), p.col + lead};
}

// Split at @sep outside brackets, parentheses and strings.
std::vector<Piece> split_top(Piece p, char sep)
{
    std::vector<Piece> out;
    int depth = 0;
    bool str = false;
    size_t start = 0;
    for (size_t i = 0; i < p.text.size(); i++) {
        char c = p.text[i];
        if (str) {
            if (c == '\\') {
                i++;
            } else if (c == '"') {
                str = false;
}
            continue;
        }
        if (c == '"') {
            str = true;
        } else if (c == '(' || c == '[') {
            depth++;
        } else if (c == ')' || c == ']') {
            depth--;
        } else if (c == sep && depth == 0) {
            out.push_back(trim(Piece{p.text.substr(start, i - start), p.col + start}));
            start = i + 1;
        }
    }
    out.push_back(trim(Piece{p.text.substr(start), p.col + start}));
    return out;
}

// A register name: class letter(s) and number; class "" if not one.
struct Reg {
    std::string cls;
    long num = -1;
};

Reg parse_reg(std::string_view t)
{
    static const char *const classes[] = {"vp", "sp", "v", "s", "i", "t"};
    for (const char *c : classes) {
        size_t n = std::strlen(c);
        if (t.size() <= n || t.substr(0, n) != c)
            continue;
        std::string_view d = t.substr(n);
        if (d.size() > 3 || !std::all_of(d.begin(), d.end(), [](char ch) {
                return std::isdigit(static_cast<unsigned char>(ch));
            }))
            continue;
        if (d.size() > 1 && d[0] == '0')
            continue;
        return {c, std::stol(std::string(d))};
    }
    return {};
}

bool reserved_name(std::string_view t)
{
    return !parse_reg(t).cls.empty() || t == "inf" || t == "nan" || t == "bits";
}

struct SymbolTable {
    struct Sym {
        Val v;
        bool label = false;
        bool equ = false;
    };
    std::map<std::string, Sym, std::less<>> syms;
};

// Recursive descent over C-like constant expressions.
class ExprParser
{
  public:
    ExprParser(std::string_view s, size_t col, const SymbolTable &st, bool pass1)
        : s_(s), col_(col), st_(st), pass1_(pass1)
    {
    }

    Val parse()
    {
        Val v = binary(0);
        skip();
        if (p_ != s_.size())
            fail("unexpected '" + std::string(s_.substr(p_, 1)) + "' in expression");
        return v;
    }

  private:
    std::string_view s_;
    size_t col_;
    const SymbolTable &st_;
    bool pass1_;
    size_t p_ = 0;

    unsigned depth_ = 0; // unary() calls under way (parentheses and unary operators nest through it)

    [[noreturn]] void fail(const std::string &m) const { throw LineError{col_ + p_, m}; }

    // One level of nesting while alive: deep nesting is an error, not a
    // stack overflow.
    class Nest
    {
      public:
        explicit Nest(ExprParser &e) : e_(e)
        {
            if (e_.depth_ >= kMaxExprDepth)
                e_.fail("expression nested too deeply (more than " + std::to_string(kMaxExprDepth) + " levels)");
            e_.depth_++;
        }
        Nest(const Nest &) = delete;
        Nest &operator=(const Nest &) = delete;
        Nest(Nest &&) = delete;
        Nest &operator=(Nest &&) = delete;
        ~Nest() { e_.depth_--; }

      private:
        ExprParser &e_;
    };

    void skip()
    {
        while (p_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[p_])))
            p_++;
    }

    static int prec(std::string_view op)
    {
        if (op == "|")
            return 1;
        if (op == "^")
            return 2;
        if (op == "&")
            return 3;
        if (op == "<<" || op == ">>")
            return 4;
        if (op == "+" || op == "-")
            return 5;
        if (op == "*" || op == "/" || op == "%")
            return 6;
        return 0;
    }

    std::string_view peek_op()
    {
        skip();
        if (p_ >= s_.size())
            return {};
        if (s_.substr(p_, 2) == "<<" || s_.substr(p_, 2) == ">>")
            return s_.substr(p_, 2);
        char c = s_[p_];
        if (std::strchr("|^&+-*/%", c))
            return s_.substr(p_, 1);
        return {};
    }

    Val binary(int min_prec)
    {
        Val l = unary();
        for (;;) {
            std::string_view op = peek_op();
            int pr = op.empty() ? 0 : prec(op);
            if (pr == 0 || pr <= min_prec)
                return l;
            size_t at = p_;
            p_ += op.size();
            Val r = binary(pr);
            l = apply(op, l, r, at);
        }
    }

    [[nodiscard]] Val apply(std::string_view op, const Val &l, const Val &r, size_t at) const
    {
        Val v;
        if (l.fp || r.fp) {
            double a = l.fp ? l.f : static_cast<double>(l.i);
            double b = r.fp ? r.f : static_cast<double>(r.i);
            v.fp = true;
            if (op == "+") {
                v.f = a + b;
            } else if (op == "-") {
                v.f = a - b;
            } else if (op == "*") {
                v.f = a * b;
            } else if (op == "/") {
                v.f = a / b;
            } else {
                throw LineError{col_ + at, "'" + std::string(op) + "' needs integer operands"};
}
            return v;
        }
        auto a = static_cast<uint64_t>(l.i), b = static_cast<uint64_t>(r.i);
        if (op == "+") {
            v.i = static_cast<int64_t>(a + b);
        } else if (op == "-") {
            v.i = static_cast<int64_t>(a - b);
        } else if (op == "*") {
            v.i = static_cast<int64_t>(a * b);
        } else if (op == "&") {
            v.i = static_cast<int64_t>(a & b);
        } else if (op == "|") {
            v.i = static_cast<int64_t>(a | b);
        } else if (op == "^") {
            v.i = static_cast<int64_t>(a ^ b);
        } else if (op == "<<" || op == ">>") {
            if (r.i < 0 || r.i > 63)
                throw LineError{col_ + at, "shift count " + std::to_string(r.i) + " out of range (0-63)"};
            v.i = op == "<<" ? static_cast<int64_t>(a << r.i) : (l.i >> r.i);
        } else {
            if (r.i == 0)
                throw LineError{col_ + at, "division by zero"};
            if (l.i == INT64_MIN && r.i == -1) {
                v.i = op == "/" ? INT64_MIN : 0;
            } else {
                v.i = op == "/" ? l.i / r.i : l.i % r.i;
}
        }
        return v;
    }

    Val unary()
    {
        const Nest nest(*this);
        skip();
        if (p_ < s_.size() && std::strchr("-+~", s_[p_])) {
            char c = s_[p_++];
            size_t at = p_ - 1;
            Val v = unary();
            if (c == '+')
                return v;
            if (v.fp) {
                if (c == '~')
                    throw LineError{col_ + at, "'~' needs an integer operand"};
                v.f = -v.f;
                return v;
            }
            v.i = c == '-' ? static_cast<int64_t>(0 - static_cast<uint64_t>(v.i)) : ~v.i;
            v.bits = false;
            return v;
        }
        return primary();
    }

    Val number()
    {
        size_t start = p_;
        std::string_view rest = s_.substr(p_);
        Val v;
        if (rest.size() > 1 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X' || rest[1] == 'b' || rest[1] == 'B')) {
            int base = (rest[1] == 'x' || rest[1] == 'X') ? 16 : 2;
            p_ += 2;
            size_t d0 = p_;
            uint64_t x = 0;
            while (p_ < s_.size() && std::isxdigit(static_cast<unsigned char>(s_[p_]))) {
                int dg = std::isdigit(static_cast<unsigned char>(s_[p_])) ? s_[p_] - '0'
                                                                           : std::tolower(s_[p_]) - 'a' + 10;
                if (dg >= base)
                    break;
                if (x > (UINT64_MAX >> (base == 16 ? 4 : 1)))
                    fail("number too large");
                x = x * static_cast<unsigned>(base) + static_cast<unsigned>(dg);
                p_++;
            }
            if (p_ == d0)
                fail("bad number");
            v.i = static_cast<int64_t>(x);
        } else {
            size_t e = p_;
            bool fp = false;
            while (e < s_.size() && std::isdigit(static_cast<unsigned char>(s_[e])))
                e++;
            if (e < s_.size() && s_[e] == '.') {
                fp = true;
                e++;
                while (e < s_.size() && std::isdigit(static_cast<unsigned char>(s_[e])))
                    e++;
            }
            if (e < s_.size() && (s_[e] == 'e' || s_[e] == 'E')) {
                size_t x = e + 1;
                if (x < s_.size() && (s_[x] == '+' || s_[x] == '-'))
                    x++;
                if (x < s_.size() && std::isdigit(static_cast<unsigned char>(s_[x]))) {
                    fp = true;
                    e = x;
                    while (e < s_.size() && std::isdigit(static_cast<unsigned char>(s_[e])))
                        e++;
                }
            }
            std::string txt(s_.substr(start, e - start));
            p_ = e;
            if (fp) {
                v.fp = true;
                v.f = std::strtod(txt.c_str(), nullptr);
            } else {
                if (txt.size() > 19)
                    fail("number too large");
                uint64_t x = std::stoull(txt);
                if (x > static_cast<uint64_t>(INT64_MAX))
                    fail("number too large");
                v.i = static_cast<int64_t>(x);
            }
        }
        if (p_ < s_.size() && ident_char(s_[p_]))
            fail("bad number");
        return v;
    }

    Val primary()
    {
        skip();
        if (p_ >= s_.size())
            fail("expression expected");
        char c = s_[p_];
        if (c == '(') {
            p_++;
            Val v = binary(0);
            skip();
            if (p_ >= s_.size() || s_[p_] != ')')
                fail("')' expected");
            p_++;
            return v;
        }
        if (std::isdigit(static_cast<unsigned char>(c)))
            return number();
        if (!ident_start(c))
            fail("unexpected '" + std::string(1, c) + "' in expression");
        size_t start = p_;
        while (p_ < s_.size() && ident_char(s_[p_]))
            p_++;
        std::string_view name = s_.substr(start, p_ - start);
        Val v;
        if (name == "inf" || name == "nan") {
            v.fp = true;
            v.f = name == "inf" ? HUGE_VAL : std::nan("");
            return v;
        }
        if (name == "bits") {
            skip();
            if (p_ >= s_.size() || s_[p_] != '(')
                fail("'(' expected after bits");
            p_++;
            size_t at = p_;
            Val x = binary(0);
            skip();
            if (p_ >= s_.size() || s_[p_] != ')')
                fail("')' expected");
            p_++;
            if (x.fp || x.i < 0 || x.i > 0xffffffffLL)
                throw LineError{col_ + at, "bits() takes a 32-bit unsigned integer"};
            x.bits = true;
            return x;
        }
        if (!parse_reg(name).cls.empty())
            throw LineError{col_ + start, "register '" + std::string(name) + "' in an expression"};
        auto it = st_.syms.find(name);
        if (it == st_.syms.end()) {
            if (pass1_)
                return v;
            throw LineError{col_ + start, "undefined symbol '" + std::string(name) + "'"};
        }
        return it->second.v;
    }
};

struct Line {
    std::string text;
    std::string file;
    unsigned line = 0;
    std::string context; // " (in macro 'm' at f:l)"
};

struct Macro {
    std::vector<std::string> params;
    std::vector<Line> body;
};

struct Placed {
    Bundle b;
    Line src;
    std::array<size_t, HPU_TPC_SLOTS> col{};
    std::array<std::string, HPU_TPC_SLOTS> text;
};

std::optional<std::string> read_disk(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    if (!f)
        return std::nullopt;
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::string dirname(const std::string &p)
{
    size_t s = p.rfind('/');
    return s == std::string::npos ? std::string() : p.substr(0, s + 1);
}

const char *const kSlotNames[] = {"load", "scalar", "vector", "store"};

std::string types_list(uint16_t ts)
{
    std::string t;
    for (unsigned dt = HPU_TPC_DT_F32; dt <= HPU_TPC_DT_U8; dt++) {
        if ((ts >> dt) & 1)
            t += (t.empty() ? "" : ", ") + std::string(dtype_name(dt));
}
    return t;
}

int cond_from(std::string_view s)
{
#define HPU_TPC_CONDCMP_(n, v, str) \
    if (s == (str))                 \
        return (v);
    HPU_TPC_CONDS(HPU_TPC_CONDCMP_)
#undef HPU_TPC_CONDCMP_
    return -1;
}

int rmode_from(std::string_view s)
{
#define HPU_TPC_RMCMP_(n, v, str) \
    if (s == (str))               \
        return (v);
    HPU_TPC_RMODES(HPU_TPC_RMCMP_)
#undef HPU_TPC_RMCMP_
    return -1;
}

const char *class_word(const std::string &c)
{
    if (c == "v")
        return "a vector register";
    if (c == "s")
        return "a scalar register";
    if (c == "sp")
        return "a scalar predicate";
    if (c == "vp")
        return "a lane predicate";
    if (c == "i")
        return "an index register";
    return "a tensor";
}

std::string kind_class(unsigned k)
{
    switch (k) {
    case HPU_TPC_OPND_VD:
    case HPU_TPC_OPND_VA:
    case HPU_TPC_OPND_VB:
    case HPU_TPC_OPND_VC:
        return "v";
    case HPU_TPC_OPND_SD:
    case HPU_TPC_OPND_SA:
    case HPU_TPC_OPND_SC:
        return "s";
    case HPU_TPC_OPND_PD:
    case HPU_TPC_OPND_PA:
    case HPU_TPC_OPND_PB:
    case HPU_TPC_OPND_PC:
    case HPU_TPC_OPND_PNA:
        return "sp";
    case HPU_TPC_OPND_QD:
    case HPU_TPC_OPND_QA:
    case HPU_TPC_OPND_QB:
    case HPU_TPC_OPND_QC:
        return "vp";
    case HPU_TPC_OPND_ID:
    case HPU_TPC_OPND_IA:
    case HPU_TPC_OPND_IB:
        return "i";
    case HPU_TPC_OPND_TA:
        return "t";
    default:
        return "";
    }
}

unsigned kind_shift(unsigned k)
{
    switch (k) {
    case HPU_TPC_OPND_VD:
    case HPU_TPC_OPND_SD:
    case HPU_TPC_OPND_PD:
    case HPU_TPC_OPND_QD:
    case HPU_TPC_OPND_ID:
        return HPU_TPC_F_D_SHIFT;
    case HPU_TPC_OPND_VB:
    case HPU_TPC_OPND_PB:
    case HPU_TPC_OPND_QB:
    case HPU_TPC_OPND_IB:
        return HPU_TPC_F_B_SHIFT;
    case HPU_TPC_OPND_VC:
    case HPU_TPC_OPND_SC:
    case HPU_TPC_OPND_PC:
    case HPU_TPC_OPND_QC:
    case HPU_TPC_OPND_DIMC:
        return HPU_TPC_F_C_SHIFT;
    default:
        return HPU_TPC_F_A_SHIFT;
    }
}

long class_count(const std::string &c)
{
    if (c == "v" || c == "s")
        return 32;
    if (c == "t")
        return HPU_TPC_MAX_TENSORS;
    return 8;
}

class Assembler
{
  public:
    explicit Assembler(Options opt) : opt_(std::move(opt))
    {
        if (!opt_.read_file)
            opt_.read_file = read_disk;
    }

    Result run(std::string_view source, const std::string &filename)
    {
        files_.push_back(filename);
        for (pass_ = 1; pass_ <= 2; pass_++) {
            reset_pass();
            include_stack_.push_back(filename);
            process_text(source, filename, "");
            include_stack_.pop_back();
            if (pass_ == 1)
                num_bundles_ = static_cast<uint32_t>(placed_.size());
        }
        pass_ = 2;
        finish(filename);
        Result r;
        r.errors = std::move(errors_);
        r.files = std::move(files_);
        if (r.errors.empty()) {
            for (const auto &p : placed_)
                kernel_.code.push_back(p.b);
            r.binary = encode_binary(kernel_);
            r.kernel = kernel_;
        }
        return r;
    }

  private:
    Options opt_;
    int pass_ = 1;
    std::vector<Diagnostic> errors_;
    SymbolTable st_;
    std::map<std::string, uint32_t> labels_;
    std::map<std::string, Macro> macros_;
    std::vector<std::string> include_stack_;
    std::vector<std::string> macro_stack_;
    std::vector<Placed> placed_;
    uint32_t num_bundles_ = 0;
    size_t lines_ = 0;   // lines processed in this pass (kMaxLines)
    bool stopped_ = false; // too many lines or bundles: nothing more is processed
    unsigned serial_ = 0;
    Kernel kernel_;
    bool have_kernel_ = false;
    std::vector<std::pair<Line, size_t>> entry_; // .entry's line
    std::string entry_expr_;
    std::map<unsigned, Line> tensor_pin_line_;

    void reset_pass()
    {
        st_ = {};
        for (const auto &[name, v] : opt_.defines) {
            SymbolTable::Sym s;
            s.v.i = v;
            st_.syms[name] = s;
        }
        if (pass_ == 2) {
            for (const auto &[name, idx] : labels_) {
                SymbolTable::Sym s;
                s.v.i = idx;
                s.label = true;
                st_.syms[name] = s;
            }
}
        macros_.clear();
        placed_.clear();
        lines_ = 0;
        stopped_ = false;
        serial_ = 0;
        kernel_ = {};
        have_kernel_ = false;
        entry_.clear();
        tensor_pin_line_.clear();
        placed_labels_.clear();
    }

    void error(const Line &l, size_t col, const std::string &msg)
    {
        if (pass_ != 2)
            return;
        errors_.push_back({l.file, l.line, static_cast<unsigned>(col + 1), msg + l.context});
    }

    void process_text(std::string_view text, const std::string &file, const std::string &context)
    {
        std::vector<Line> lines;
        unsigned n = 0;
        size_t pos = 0;
        while (pos <= text.size()) {
            size_t e = text.find('\n', pos);
            if (e == std::string_view::npos)
                e = text.size();
            std::string_view l = text.substr(pos, e - pos);
            if (!l.empty() && l.back() == '\r')
                l.remove_suffix(1);
            lines.push_back({std::string(l), file, ++n, context});
            pos = e + 1;
        }
        process_lines(lines);
    }

    static std::string strip_comment(const std::string &t)
    {
        bool str = false;
        for (size_t i = 0; i + 1 < t.size(); i++) {
            if (str) {
                if (t[i] == '\\') {
                    i++;
                } else if (t[i] == '"') {
                    str = false;
}
            } else if (t[i] == '"') {
                str = true;
            } else if (t[i] == '/' && t[i + 1] == '/') {
                return t.substr(0, i);
            }
        }
        return t;
    }

    void process_lines(const std::vector<Line> &lines)
    {
        for (size_t i = 0; i < lines.size() && !stopped_; i++) {
            const Line &l = lines[i];
            if (++lines_ > kMaxLines) {
                error(l, 0,
                      "more than " + std::to_string(kMaxLines) +
                          " lines after expanding macros and includes (macros or includes expanding without bound?)");
                stopped_ = true;
                return;
            }
            std::string code = strip_comment(l.text);
            Piece p = trim(Piece{code, 0});
            if (p.text.substr(0, 6) == ".macro" &&
                (p.text.size() == 6 || std::isspace(static_cast<unsigned char>(p.text[6])))) {
                i = define_macro(lines, i, Piece{p.text.substr(6), p.col + 6});
                continue;
            }
            process_line(l, p);
        }
    }

    size_t define_macro(const std::vector<Line> &lines, size_t i, Piece rest)
    {
        const Line &l = lines[i];
        rest = trim(rest);
        size_t e = 0;
        while (e < rest.text.size() && ident_char(rest.text[e]))
            e++;
        std::string name(rest.text.substr(0, e));
        Macro m;
        bool ok = true;
        if (name.empty() || !ident_start(name[0]) || name[0] == '.') {
            error(l, rest.col, ".macro needs a name");
            ok = false;
        } else if (macros_.count(name) || find_mnemonic(name) || name == "nop" || reserved_name(name)) {
            error(l, rest.col, "macro '" + name + "' is already defined or names an instruction");
            ok = false;
        }
        Piece ps = trim(Piece{rest.text.substr(e), rest.col + e});
        if (ok && !ps.text.empty()) {
            for (Piece a : split_top(ps, ',')) {
                std::string pn(a.text);
                if (pn.empty() || !ident_start(pn[0]) || pn[0] == '.' ||
                    !std::all_of(pn.begin(), pn.end(), ident_char) ||
                    std::find(m.params.begin(), m.params.end(), pn) != m.params.end()) {
                    error(l, a.col, "bad macro parameter '" + pn + "'");
                    ok = false;
                }
                m.params.push_back(pn);
            }
        }
        size_t j = i + 1;
        for (; j < lines.size(); j++) {
            std::string t(trim(std::string_view(strip_comment(lines[j].text))));
            if (t == ".endm")
                break;
            if (t.substr(0, 6) == ".macro" && (t.size() == 6 || std::isspace(static_cast<unsigned char>(t[6])))) {
                error(lines[j], 0, ".macro inside the definition of macro '" + name + "' (missing .endm?)");
                ok = false;
            }
            m.body.push_back(lines[j]);
        }
        if (j == lines.size()) {
            error(l, 0, "macro '" + name + "' has no .endm");
            return j;
        }
        if (ok)
            macros_[name] = std::move(m);
        return j;
    }

    void process_line(const Line &l, Piece p)
    {
        if (p.text.empty())
            return;
        // label:
        size_t e = 0;
        while (e < p.text.size() && ident_char(p.text[e]))
            e++;
        if (e > 0 && e < p.text.size() && p.text[e] == ':' && ident_start(p.text[0]) && p.text[0] != '.') {
            define_label(l, Piece{p.text.substr(0, e), p.col});
            p = trim(Piece{p.text.substr(e + 1), p.col + e + 1});
            if (p.text.empty())
                return;
            e = 0;
            while (e < p.text.size() && ident_char(p.text[e]))
                e++;
        }
        std::string word(p.text.substr(0, e));
        Piece rest = trim(Piece{p.text.substr(e), p.col + e});
        if (!word.empty() && word[0] == '.') {
            directive(l, word, p.col, rest);
            return;
        }
        auto m = macros_.find(word);
        if (m != macros_.end()) {
            expand(l, word, m->second, p.col, rest);
            return;
        }
        bundle(l, p);
    }

    void define_label(const Line &l, Piece name)
    {
        std::string n(name.text);
        if (reserved_name(n) || macros_.count(n)) {
            error(l, name.col, "'" + n + "' cannot be a label");
            return;
        }
        auto idx = static_cast<uint32_t>(placed_.size());
        if (pass_ == 1) {
            if (!labels_.count(n))
                labels_[n] = idx;
            return;
        }
        auto it = st_.syms.find(n);
        if (it != st_.syms.end() && !it->second.label) {
            error(l, name.col, "'" + n + "' is already a constant");
            return;
        }
        if (placed_labels_.count(n)) {
            error(l, name.col, "label '" + n + "' defined twice");
            return;
        }
        placed_labels_.insert(n);
    }

    std::set<std::string> placed_labels_;
    std::vector<std::string> files_;

    void expand(const Line &l, const std::string &name, const Macro &m, size_t col, Piece args)
    {
        if (std::find(macro_stack_.begin(), macro_stack_.end(), name) != macro_stack_.end()) {
            error(l, col, "recursive macro '" + name + "'");
            return;
        }
        if (macro_stack_.size() + include_stack_.size() > kMaxDepth) {
            error(l, col, "macros and includes nested too deeply");
            return;
        }
        std::vector<Piece> a;
        if (!args.text.empty())
            a = split_top(args, ',');
        if (a.size() != m.params.size()) {
            error(l, col, "macro '" + name + "' takes " + std::to_string(m.params.size()) +
                              " arguments, got " + std::to_string(a.size()));
            return;
        }
        unsigned id = serial_++;
        std::string ctx = " (in macro '" + name + "' at " + l.file + ":" + std::to_string(l.line) + ")" + l.context;
        std::vector<Line> body;
        for (const Line &b : m.body) {
            std::string out;
            bool bad = false;
            const std::string &t = b.text;
            for (size_t i = 0; i < t.size(); i++) {
                if (t[i] != '\\') {
                    out += t[i];
                    continue;
                }
                if (i + 1 < t.size() && t[i + 1] == '@') {
                    out += std::to_string(id);
                    i++;
                    continue;
                }
                size_t e = i + 1;
                while (e < t.size() && ident_char(t[e]) && t[e] != '.')
                    e++;
                std::string pn = t.substr(i + 1, e - i - 1);
                auto it = std::find(m.params.begin(), m.params.end(), pn);
                if (it == m.params.end()) {
                    Line bl = b;
                    bl.context = ctx;
                    error(bl, i, "unknown macro parameter '\\" + pn + "'");
                    bad = true;
                    break;
                }
                out += a[static_cast<size_t>(it - m.params.begin())].text;
                i = e - 1;
            }
            if (!bad)
                body.push_back({out, b.file, b.line, ctx});
        }
        macro_stack_.push_back(name);
        process_lines(body);
        macro_stack_.pop_back();
    }

    // ---- directives --------------------------------------------------------

    std::optional<int64_t> int_expr(const Line &l, Piece p, int64_t lo, int64_t hi, const char *what)
    {
        if (pass_ == 1)
            return std::nullopt;
        if (p.text.empty()) {
            error(l, p.col, std::string(what) + ": value expected");
            return std::nullopt;
        }
        try {
            Val v = ExprParser(p.text, p.col, st_, false).parse();
            if (v.fp) {
                error(l, p.col, std::string(what) + ": integer expected");
                return std::nullopt;
            }
            if (v.i < lo || v.i > hi) {
                error(l, p.col, std::string(what) + " " + std::to_string(v.i) + " out of range (" +
                                    std::to_string(lo) + "-" + std::to_string(hi) + ")");
                return std::nullopt;
            }
            return v.i;
        } catch (const LineError &e) {
            error(l, e.col, e.msg);
            return std::nullopt;
        }
    }

    std::optional<std::string> string_lit(const Line &l, Piece p)
    {
        std::string_view t = p.text;
        if (t.size() < 2 || t.front() != '"' || t.back() != '"') {
            error(l, p.col, "string in double quotes expected");
            return std::nullopt;
        }
        std::string out;
        for (size_t i = 1; i + 1 < t.size(); i++) {
            char c = t[i];
            if (c == '\\') {
                if (i + 2 >= t.size() || (t[i + 1] != '"' && t[i + 1] != '\\')) {
                    error(l, p.col + i, R"(only \" and \\ escapes are allowed)");
                    return std::nullopt;
                }
                c = t[++i];
            } else if (c == '"') {
                error(l, p.col + i, "unescaped '\"' in string");
                return std::nullopt;
            }
            if (c < 0x20 || c > 0x7e) {
                error(l, p.col + i, "strings must be printable ASCII");
                return std::nullopt;
            }
            out += c;
        }
        return out;
    }

    void directive(const Line &l, const std::string &word, size_t col, Piece rest)
    {
        if (word == ".include") {
            include(l, col, rest);
            return;
        }
        if (word == ".endm") {
            error(l, col, ".endm without .macro");
            return;
        }
        if (pass_ == 1)
            return;
        if (word == ".kernel") {
            // A bare name of the common characters, or any name a binary
            // may hold (printable ASCII) as a string: the disassembler
            // quotes the others.
            std::optional<std::string> n;
            if (!rest.text.empty() && rest.text.front() == '"') {
                n = string_lit(l, rest);
                if (n && (n->empty() || n->size() >= HPU_TPC_NAME_SIZE)) {
                    error(l, rest.col, ".kernel needs a name of 1-31 characters");
                    n.reset();
                }
            } else if (kernel_name_bare(rest.text)) {
                n = std::string(rest.text);
            } else {
                error(l, rest.col,
                      ".kernel needs a name of 1-31 letters, digits, '_', '.', '-' (others in double quotes)");
            }
            if (!n) {
                // reported
            } else if (have_kernel_) {
                error(l, col, ".kernel given twice");
            } else {
                kernel_.name = *n;
                have_kernel_ = true;
            }
        } else if (word == ".tensors") {
            if (auto v = int_expr(l, rest, 0, HPU_TPC_MAX_TENSORS, ".tensors"))
                kernel_.num_tensors = static_cast<unsigned>(*v);
        } else if (word == ".scalars") {
            if (auto v = int_expr(l, rest, 0, HPU_TPC_MAX_SCALARS, ".scalars"))
                kernel_.num_scalars = static_cast<unsigned>(*v);
        } else if (word == ".index_dims") {
            if (auto v = int_expr(l, rest, 1, HPU_TPC_DIMS, ".index_dims"))
                kernel_.index_dims = static_cast<unsigned>(*v);
        } else if (word == ".slm") {
            if (auto v = int_expr(l, rest, 0, HPU_TPC_SLM_SIZE, ".slm")) {
                if (*v % 4)
                    error(l, rest.col, ".slm must be a multiple of 4");
                kernel_.slm_size = static_cast<uint32_t>(*v);
            }
        } else if (word == ".vlm") {
            if (auto v = int_expr(l, rest, 0, HPU_TPC_VLM_SIZE, ".vlm")) {
                if (*v % HPU_TPC_VBYTES)
                    error(l, rest.col, ".vlm must be a multiple of 256");
                kernel_.vlm_size = static_cast<uint32_t>(*v);
            }
        } else if (word == ".tensor") {
            tensor_pin(l, rest);
        } else if (word == ".entry") {
            entry_.emplace_back(l, rest.col);
            entry_expr_ = std::string(rest.text);
        } else if (word == ".meta") {
            if (auto s = string_lit(l, rest))
                kernel_.meta.push_back(*s);
        } else if (word == ".set" || word == ".equ") {
            set_symbol(l, word == ".equ", rest);
        } else {
            error(l, col, "unknown directive '" + word + "'");
        }
    }

    void tensor_pin(const Line &l, Piece rest)
    {
        auto a = split_top(rest, ',');
        if (a.size() != 2) {
            error(l, rest.col, ".tensor takes a tensor number and a data type");
            return;
        }
        auto n = int_expr(l, a[0], 0, HPU_TPC_MAX_TENSORS - 1, ".tensor number");
        unsigned dt = dtype_from_name(a[1].text);
        if (!dt) {
            error(l, a[1].col, "unknown data type '" + std::string(a[1].text) + "'");
            return;
        }
        if (n) {
            kernel_.tensor_dtype[static_cast<size_t>(*n)] = static_cast<uint8_t>(dt);
            tensor_pin_line_[static_cast<unsigned>(*n)] = l;
        }
    }

    void set_symbol(const Line &l, bool equ, Piece rest)
    {
        auto a = split_top(rest, ',');
        const char *w = equ ? ".equ" : ".set";
        if (a.size() != 2) {
            error(l, rest.col, std::string(w) + " takes a name and a value");
            return;
        }
        std::string n(a[0].text);
        if (n.empty() || !ident_start(n[0]) || n[0] == '.' || !std::all_of(n.begin(), n.end(), ident_char) ||
            reserved_name(n)) {
            error(l, a[0].col, "bad symbol name '" + n + "'");
            return;
        }
        auto it = st_.syms.find(n);
        if (it != st_.syms.end() && (it->second.label || it->second.equ || equ)) {
            error(l, a[0].col, "'" + n + "' is already defined" +
                                   std::string(it->second.label ? " as a label" : ""));
            return;
        }
        try {
            Val v = ExprParser(a[1].text, a[1].col, st_, false).parse();
            SymbolTable::Sym s;
            s.v = v;
            s.equ = equ;
            st_.syms[n] = s;
        } catch (const LineError &e) {
            error(l, e.col, e.msg);
        }
    }

    void include(const Line &l, size_t col, Piece rest)
    {
        auto name = string_lit(l, rest);
        if (!name) {
            if (pass_ == 1 && rest.text.size() >= 2) {
                name = std::string(rest.text.substr(1, rest.text.size() - 2));
            } else {
                return;
}
        }
        std::vector<std::string> cands;
        if (!name->empty() && (*name)[0] == '/') {
            cands.push_back(*name);
        } else {
            cands.push_back(dirname(l.file) + *name);
            for (const auto &d : opt_.include_dirs)
                cands.push_back(d + (d.empty() || d.back() == '/' ? "" : "/") + *name);
        }
        for (const auto &c : cands) {
            auto text = opt_.read_file(c);
            if (!text)
                continue;
            if (std::find(include_stack_.begin(), include_stack_.end(), c) != include_stack_.end()) {
                error(l, col, "recursive .include of \"" + c + "\"");
                return;
            }
            if (macro_stack_.size() + include_stack_.size() > kMaxDepth) {
                error(l, col, "macros and includes nested too deeply");
                return;
            }
            if (pass_ == 2 && std::find(files_.begin(), files_.end(), c) == files_.end())
                files_.push_back(c);
            include_stack_.push_back(c);
            process_text(*text, c, l.context);
            include_stack_.pop_back();
            return;
        }
        error(l, rest.col, "cannot find include file \"" + *name + "\"");
    }

    // ---- bundles -----------------------------------------------------------

    void bundle(const Line &l, Piece p)
    {
        if (placed_.size() > HPU_TPC_MAX_BUNDLES) {
            // finish() reports it; nothing more is kept.
            stopped_ = true;
            return;
        }
        Placed pl;
        pl.src = l;
        if (pass_ == 1) {
            placed_.push_back(pl);
            return;
        }
        int last = -1;
        std::array<bool, HPU_TPC_SLOTS> has{};
        for (Piece s : split_top(p, ';')) {
            if (s.text.empty()) {
                error(l, s.col, "empty slot (two ';' in a row, or ';' at an end)");
                continue;
            }
            Slot out;
            int slot = instruction(l, s, out);
            if (slot < 0)
                continue;
            if (slot == 4) // nop
                continue;
            if (has[static_cast<size_t>(slot)]) {
                error(l, s.col, "two instructions in the " + std::string(kSlotNames[slot]) + " slot");
                continue;
            }
            if (slot < last) {
                error(l, s.col, "'" + first_word(s.text) + "' belongs to the " + kSlotNames[slot] +
                                    " slot, which comes before the " + kSlotNames[last] +
                                    " slot (order: load ; scalar ; vector ; store)");
                continue;
            }
            has[static_cast<size_t>(slot)] = true;
            last = slot;
            pl.b.slot[static_cast<size_t>(slot)] = out;
            pl.col[static_cast<size_t>(slot)] = s.col;
            pl.text[static_cast<size_t>(slot)] = std::string(s.text);
        }
        check_conflicts(pl);
        placed_.push_back(pl);
    }

    static std::string first_word(std::string_view t)
    {
        if (!t.empty() && t[0] == '(') {
            size_t c = t.find(')');
            if (c != std::string_view::npos)
                t = trim(t.substr(c + 1));
        }
        size_t e = 0;
        while (e < t.size() && !std::isspace(static_cast<unsigned char>(t[e])))
            e++;
        return std::string(t.substr(0, e));
    }

    void check_conflicts(const Placed &pl)
    {
        std::map<std::pair<std::string, uint64_t>, unsigned> w;
        for (unsigned i = 0; i < HPU_TPC_SLOTS; i++) {
            const Slot &s = pl.b.slot[i];
            const hpu_tpc_insn_desc *d = find_insn(i, HPU_TPC_GET(s.lo, OPCODE));
            if (!d || kind_shift(d->opnd[0]) != HPU_TPC_F_D_SHIFT || kind_class(d->opnd[0]).empty())
                continue;
            auto key = std::make_pair(kind_class(d->opnd[0]), HPU_TPC_GET(s.lo, D));
            auto it = w.find(key);
            if (it != w.end()) {
                error(pl.src, pl.col[i], key.first + std::to_string(key.second) + " is written by both the " +
                                             kSlotNames[it->second] + " and the " + kSlotNames[i] + " slot");
                continue;
            }
            w[key] = i;
        }
    }

    // One instruction into @out; returns its slot, 4 for nop, -1 on error.
    int instruction(const Line &l, Piece p, Slot &out)
    {
        std::string_view t = p.text;
        size_t col = p.col;
        uint64_t lo = 0;
        bool lane_guard = false;
        size_t guard_col = col;
        if (t[0] == '(') {
            size_t c = t.find(')');
            if (c == std::string_view::npos) {
                error(l, col, "')' expected after the guard");
                return -1;
            }
            std::string_view g = trim(t.substr(1, c - 1));
            bool neg = !g.empty() && g[0] == '!';
            if (neg)
                g = trim(g.substr(1));
            Reg r = parse_reg(g);
            if ((r.cls != "sp" && r.cls != "vp") || r.num >= 8) {
                error(l, col + 1, "guard must be (spN), (!spN), (vpN) or (!vpN) with N 0-7");
                return -1;
            }
            lane_guard = r.cls == "vp";
            lo |= HPU_TPC_PUT(GREG, r.num) | HPU_TPC_PUT(GNEG, neg) | HPU_TPC_PUT(GLANE, lane_guard);
            Piece rest = trim(Piece{t.substr(c + 1), col + c + 1});
            t = rest.text;
            col = rest.col;
            if (t.empty()) {
                error(l, guard_col, "instruction expected after the guard");
                return -1;
            }
        }
        size_t e = 0;
        while (e < t.size() && !std::isspace(static_cast<unsigned char>(t[e])))
            e++;
        std::string word(t.substr(0, e));
        Piece ops = trim(Piece{t.substr(e), col + e});
        if (word == "nop") {
            if (!ops.text.empty() || lo)
                error(l, col, "nop takes no operands and no guard");
            return 4;
        }
        // Longest table mnemonic that is a prefix at a '.' boundary.
        std::vector<std::string> parts;
        {
            std::stringstream ss(word);
            std::string x;
            while (std::getline(ss, x, '.'))
                parts.push_back(x);
        }
        const hpu_tpc_insn_desc *d = nullptr;
        size_t used = 0;
        for (size_t n = parts.size(); n > 0 && !d; n--) {
            std::string cand;
            for (size_t i = 0; i < n; i++)
                cand += (i ? "." : "") + parts[i];
            d = find_mnemonic(cand);
            used = n;
        }
        if (!d) {
            error(l, col, "unknown instruction '" + word + "'");
            return -1;
        }
        if (lane_guard && !(d->flags & HPU_TPC_IF_LANEG)) {
            error(l, guard_col, std::string(d->mnemonic) + " cannot be guarded by a lane predicate");
            return -1;
        }
        lo |= HPU_TPC_PUT(OPCODE, d->opcode);
        std::vector<unsigned> types;
        int mod = -1;
        bool sat = false;
        for (size_t i = used; i < parts.size(); i++) {
            const std::string &sfx = parts[i];
            int c = cond_from(sfx), rm = rmode_from(sfx);
            unsigned dt = dtype_from_name(sfx);
            bool ok = true;
            if (dt) {
                types.push_back(dt);
            } else if (c >= 0 && (d->flags & HPU_TPC_IF_COND) && mod < 0) {
                mod = c;
            } else if (rm >= 0 && (d->flags & HPU_TPC_IF_RMODE) && mod < 0) {
                mod = rm;
            } else if (sfx == "sat" && (d->flags & HPU_TPC_IF_SAT) && !sat) {
                sat = true;
            } else {
                ok = false;
}
            if (!ok) {
                error(l, col, "'." + sfx + "' is not a suffix of " + d->mnemonic);
                return -1;
            }
        }
        size_t want_types = d->types == HPU_TPC_TS_NONE ? 0 : (d->flags & HPU_TPC_IF_TYPE2) ? 2 : 1;
        if (types.size() != want_types) {
            if (want_types == 0) {
                error(l, col, std::string(d->mnemonic) + " takes no data type");
            } else if (want_types == 1) {
                error(l, col, std::string(d->mnemonic) + " needs one data type (" + types_list(d->types) + ")");
            } else {
                error(l, col, std::string(d->mnemonic) + " needs a destination and a source type, as in " +
                                  d->mnemonic + ".bf16.f32");
}
            return -1;
        }
        unsigned type = 0, type2 = 0;
        if (want_types == 2) {
            type2 = types[0];
            type = types[1];
        } else if (want_types == 1) {
            type = types[0];
        }
        for (unsigned dt : {type, type2}) {
            if (dt && !((d->types >> dt) & 1)) {
                error(l, col, std::string(d->mnemonic) + " does not take ." + std::string(dtype_name(dt)) +
                                  " (types: " + types_list(d->types) + ")");
                return -1;
            }
        }
        if (want_types == 2 && type == type2) {
            error(l, col, std::string(d->mnemonic) + " converts between two different types");
            return -1;
        }
        if ((d->flags & HPU_TPC_IF_COND) && mod < 0) {
            error(l, col, std::string(d->mnemonic) + " needs a condition (.eq .ne .lt .le .gt .ge)");
            return -1;
        }
        if ((d->flags & HPU_TPC_IF_RMODE) && mod == HPU_TPC_RM_SR &&
            !(d->slot == HPU_TPC_SLOT_VECTOR && type == HPU_TPC_DT_F32 && type2 == HPU_TPC_DT_BF16)) {
            error(l, col, "stochastic rounding (.sr) is only for vcvt.bf16.f32");
            return -1;
        }
        if (sat && !(d->flags & HPU_TPC_IF_TYPE2) && !((HPU_TPC_TS_INT >> type) & 1)) {
            error(l, col, ".sat is for integer types only");
            return -1;
        }
        lo |= HPU_TPC_PUT(TYPE, type) | HPU_TPC_PUT(TYPE2, type2) | HPU_TPC_PUT(SAT, sat);
        if (mod > 0)
            lo |= HPU_TPC_PUT(MOD, mod);
        uint64_t hi = 0;
        if (!operands(l, *d, type, type2, ops, lo, hi))
            return -1;
        out.lo = lo;
        out.hi = hi;
        return d->slot;
    }

    std::optional<Val> value(const Line &l, Piece p)
    {
        try {
            return ExprParser(p.text, p.col, st_, false).parse();
        } catch (const LineError &e) {
            error(l, e.col, e.msg);
            return std::nullopt;
        }
    }

    // The 32-bit immediate of an XB/SXB operand.
    std::optional<uint32_t> typed_imm(const Line &l, const hpu_tpc_insn_desc &d, unsigned type, Piece p)
    {
        auto v = value(l, p);
        if (!v)
            return std::nullopt;
        auto range = [&](int64_t lo, int64_t hi, const std::string &what) -> std::optional<uint32_t> {
            if (v->fp) {
                error(l, p.col, what + ": integer expected");
                return std::nullopt;
            }
            if (v->i < lo || v->i > hi) {
                error(l, p.col, what + " " + std::to_string(v->i) + " out of range (" + std::to_string(lo) +
                                    " to " + std::to_string(hi) + ")");
                return std::nullopt;
            }
            return static_cast<uint32_t>(v->i);
        };
        if (d.flags & HPU_TPC_IF_LANEIMM)
            return range(0, hpu_tpc_lanes(type) - 1, "lane");
        if (d.flags & HPU_TPC_IF_IDX)
            return range(INT32_MIN, INT32_MAX, "index immediate");
        bool fp_type = type == HPU_TPC_DT_F32 || type == HPU_TPC_DT_BF16;
        if (fp_type || (d.types == HPU_TPC_TS_NONE && v->fp)) {
            if (v->bits)
                return static_cast<uint32_t>(v->i);
            double x = v->fp ? v->f : static_cast<double>(v->i);
            // Values from here on round to infinity (and converting them is undefined).
            if (std::isfinite(x) && std::fabs(x) >= 0x1.ffffffp+127) {
                error(l, p.col, "immediate out of range for f32");
                return std::nullopt;
            }
            auto f = static_cast<float>(x);
            if (!v->fp && static_cast<double>(f) != x) {
                error(l, p.col, "integer " + std::to_string(v->i) + " is not exact in f32");
                return std::nullopt;
            }
            uint32_t b = 0;
            std::memcpy(&b, &f, 4);
            return b;
        }
        if (d.types == HPU_TPC_TS_NONE)
            return range(INT32_MIN, UINT32_MAX, "immediate");
        unsigned w = 8 * hpu_tpc_dtype_size(type);
        auto r = range(-(int64_t{1} << (w - 1)), (int64_t{1} << w) - 1,
                       "immediate for ." + std::string(dtype_name(type)));
        if (r && w < 32)
            *r &= (uint32_t{1} << w) - 1;
        return r;
    }

    bool operands(const Line &l, const hpu_tpc_insn_desc &d, unsigned type, unsigned type2, Piece ops,
                  uint64_t &lo, uint64_t &hi)
    {
        size_t n = 0;
        while (n < 4 && d.opnd[n] != HPU_TPC_OPND_NONE)
            n++;
        std::vector<Piece> a;
        if (!ops.text.empty())
            a = split_top(ops, ',');
        if (a.size() != n) {
            error(l, ops.col, std::string(d.mnemonic) + " takes " + std::to_string(n) + " operand" +
                                  (n == 1 ? "" : "s") + ", got " + std::to_string(a.size()));
            return false;
        }
        for (size_t i = 0; i < n; i++) {
            if (!operand(l, d, type, type2, d.opnd[i], a[i], lo, hi))
                return false;
        }
        return true;
    }

    bool operand(const Line &l, const hpu_tpc_insn_desc &d, unsigned type, unsigned type2, unsigned k, Piece p,
                 uint64_t &lo, uint64_t &hi)
    {
        std::string cls = kind_class(k);
        if (p.text.empty()) {
            error(l, p.col, "operand expected");
            return false;
        }
        if (!cls.empty()) {
            std::string_view t = p.text;
            bool neg = false;
            if (k == HPU_TPC_OPND_PNA && t[0] == '!') {
                neg = true;
                t = trim(t.substr(1));
            }
            Reg r = parse_reg(t);
            if (r.cls.empty()) {
                error(l, p.col, std::string("expected ") + class_word(cls) + ", got '" + std::string(p.text) + "'");
                return false;
            }
            if (r.cls != cls) {
                error(l, p.col, std::string("expected ") + class_word(cls) + ", got " + class_word(r.cls) + " '" +
                                    std::string(t) + "'");
                return false;
            }
            if (r.num >= class_count(cls)) {
                error(l, p.col, "bad register '" + std::string(t) + "' (" + cls + "0-" + cls +
                                    std::to_string(class_count(cls) - 1) + ")");
                return false;
            }
            if ((k == HPU_TPC_OPND_PD || k == HPU_TPC_OPND_QD) && r.num == 0) {
                error(l, p.col, cls + "0 is always true and cannot be written");
                return false;
            }
            lo |= static_cast<uint64_t>(r.num) << kind_shift(k);
            if (neg)
                lo |= HPU_TPC_PUT(MOD, 1);
            return true;
        }
        switch (k) {
        case HPU_TPC_OPND_XB:
        case HPU_TPC_OPND_SXB: {
            Reg r = parse_reg(p.text);
            if (!r.cls.empty()) {
                if (r.cls == "v" && k == HPU_TPC_OPND_XB && r.num < 32) {
                    lo |= HPU_TPC_PUT(FORM, HPU_TPC_FORM_V) | HPU_TPC_PUT(B, r.num);
                    return true;
                }
                if (r.cls == "s" && r.num < 32) {
                    lo |= HPU_TPC_PUT(FORM, HPU_TPC_FORM_S) | HPU_TPC_PUT(B, r.num);
                    return true;
                }
                error(l, p.col, std::string("expected ") +
                                    (k == HPU_TPC_OPND_XB ? "a vector register, " : "") +
                                    "a scalar register or an immediate, got '" + std::string(p.text) + "'");
                return false;
            }
            auto imm = typed_imm(l, d, type, p);
            if (!imm)
                return false;
            lo |= HPU_TPC_PUT(FORM, HPU_TPC_FORM_IMM);
            hi |= HPU_TPC_PUT(IMM, *imm);
            return true;
        }
        case HPU_TPC_OPND_DIMC: {
            auto v = int_expr(l, p, 0, HPU_TPC_DIMS - 1, "dimension");
            if (!v)
                return false;
            lo |= HPU_TPC_PUT(C, *v);
            return true;
        }
        case HPU_TPC_OPND_IMM: {
            int64_t top = (d.flags & HPU_TPC_IF_BIT) ? 1 : (d.flags & HPU_TPC_IF_ARG) ? HPU_TPC_MAX_SCALARS - 1 : UINT32_MAX;
            auto v = int_expr(l, p, (d.flags & (HPU_TPC_IF_BIT | HPU_TPC_IF_ARG)) ? 0 : INT32_MIN, top,
                              (d.flags & HPU_TPC_IF_ARG) ? "scalar argument" : "immediate");
            if (!v)
                return false;
            hi |= HPU_TPC_PUT(IMM, static_cast<uint32_t>(*v));
            return true;
        }
        case HPU_TPC_OPND_LBL: {
            std::string name(p.text);
            if (!name.empty() && ident_start(name[0]) && std::all_of(name.begin(), name.end(), ident_char) &&
                !st_.syms.count(name) && !reserved_name(name)) {
                error(l, p.col, "undefined label '" + name + "'");
                return false;
            }
            auto v = int_expr(l, p, 0, static_cast<int64_t>(num_bundles_) - 1, "branch target");
            if (!v)
                return false;
            hi |= HPU_TPC_PUT(IMM, static_cast<uint32_t>(*v));
            return true;
        }
        case HPU_TPC_OPND_PART: {
            unsigned ratio = std::max(hpu_tpc_lanes(type), hpu_tpc_lanes(type2)) /
                             std::min(hpu_tpc_lanes(type), hpu_tpc_lanes(type2));
            auto v = int_expr(l, p, 0, ratio - 1, "part");
            if (!v)
                return false;
            lo |= HPU_TPC_PUT(PART, *v);
            return true;
        }
        case HPU_TPC_OPND_MEM:
            return mem_operand(l, p, lo, hi);
        default:
            error(l, p.col, "internal: unknown operand kind");
            return false;
        }
    }

    bool mem_operand(const Line &l, Piece p, uint64_t &lo, uint64_t &hi)
    {
        std::string_view t = p.text;
        if (t.size() < 2 || t.front() != '[' || t.back() != ']') {
            error(l, p.col, "expected a local address [sN], [sN + offset] or [address]");
            return false;
        }
        Piece in = trim(Piece{t.substr(1, t.size() - 2), p.col + 1});
        size_t e = 0;
        while (e < in.text.size() && ident_char(in.text[e]))
            e++;
        Reg r = parse_reg(in.text.substr(0, e));
        int64_t off = 0;
        if (!r.cls.empty()) {
            if (r.cls != "s" || r.num >= 32) {
                error(l, in.col, "the base of a local address is a scalar register s0-s31");
                return false;
            }
            Piece rest = trim(Piece{in.text.substr(e), in.col + e});
            if (!rest.text.empty()) {
                if (rest.text[0] != '+' && rest.text[0] != '-') {
                    error(l, rest.col, "'+' or '-' expected after the base register");
                    return false;
                }
                bool minus = rest.text[0] == '-';
                auto v = int_expr(l, trim(Piece{rest.text.substr(1), rest.col + 1}), INT32_MIN, UINT32_MAX, "offset");
                if (!v)
                    return false;
                off = minus ? -*v : *v;
                if (off < INT32_MIN || off > INT32_MAX) {
                    error(l, rest.col, "offset out of range (-2^31 to 2^31-1)");
                    return false;
                }
            }
            lo |= HPU_TPC_PUT(FORM, HPU_TPC_FORM_S) | HPU_TPC_PUT(A, r.num);
        } else {
            auto v = int_expr(l, in, INT32_MIN, INT32_MAX, "local address");
            if (!v)
                return false;
            off = *v;
            lo |= HPU_TPC_PUT(FORM, HPU_TPC_FORM_IMM);
        }
        hi |= HPU_TPC_PUT(IMM, static_cast<uint32_t>(off));
        return true;
    }

    // ---- end of the second pass -------------------------------------------

    void finish(const std::string &filename)
    {
        Line top{"", filename, 1, ""};
        // Only when nothing else went wrong: an error earlier may be why.
        if (!have_kernel_ && errors_.empty())
            error(top, 0, "missing .kernel NAME");
        if (placed_.empty() && errors_.empty())
            error(top, 0, "no code: a kernel needs at least one bundle");
        if (placed_.size() > HPU_TPC_MAX_BUNDLES)
            error(top, 0, "too many bundles (more than " + std::to_string(HPU_TPC_MAX_BUNDLES) + ")");
        for (const auto &[n, l] : tensor_pin_line_) {
            if (n >= kernel_.num_tensors) {
                error(l, 0, ".tensor " + std::to_string(n) + " but .tensors is " +
                                std::to_string(kernel_.num_tensors));
}
}
        if (!entry_.empty()) {
            auto v = int_expr(entry_.back().first, Piece{entry_expr_, entry_.back().second}, 0,
                              std::max<int64_t>(0, static_cast<int64_t>(placed_.size()) - 1), ".entry");
            if (v)
                kernel_.entry = static_cast<uint32_t>(*v);
        }
        CodeContext ctx{static_cast<uint32_t>(placed_.size()), kernel_.num_tensors, kernel_.num_scalars};
        for (const auto &pl : placed_)
            final_checks(pl, ctx);
    }

    void final_checks(const Placed &pl, const CodeContext &ctx)
    {
        for (unsigned i = 0; i < HPU_TPC_SLOTS; i++) {
            const Slot &s = pl.b.slot[i];
            const hpu_tpc_insn_desc *d = find_insn(i, HPU_TPC_GET(s.lo, OPCODE));
            if (!d)
                continue;
            const Line &l = pl.src;
            unsigned r = check_slot(i, s, ctx);
            uint64_t t = HPU_TPC_GET(s.lo, A);
            if (r == HPU_TPC_ILL_TENSOR) {
                error(l, pl.col[i], "t" + std::to_string(t) + " but .tensors is " + std::to_string(ctx.num_tensors));
            } else if (r == HPU_TPC_ILL_ARG) {
                error(l, pl.col[i], "scalar argument " + std::to_string(HPU_TPC_GET(s.hi, IMM)) +
                                        " but .scalars is " + std::to_string(ctx.num_scalars));
            } else if (r) {
                error(l, pl.col[i], "internal: the encoding of '" + pl.text[i] + "' is refused (" +
                                        std::string(illegal_name(r)) + ")");
            } else if ((d->flags & HPU_TPC_IF_TENSOR) && kernel_.tensor_dtype[t] &&
                       kernel_.tensor_dtype[t] != HPU_TPC_GET(s.lo, TYPE)) {
                error(l, pl.col[i], "t" + std::to_string(t) + " is declared ." +
                                        std::string(dtype_name(kernel_.tensor_dtype[t])) + " by .tensor, not ." +
                                        std::string(dtype_name(static_cast<unsigned>(HPU_TPC_GET(s.lo, TYPE)))));
            }
        }
    }
};

} // namespace

Result assemble(std::string_view source, const std::string &filename, const Options &opt)
{
    Assembler a(opt);
    return a.run(source, filename);
}

Result assemble_file(const std::string &path, const Options &opt)
{
    Options o = opt;
    if (!o.read_file)
        o.read_file = read_disk;
    auto text = o.read_file(path);
    if (!text) {
        Result r;
        r.errors.push_back({path, 0, 0, "cannot read the file"});
        return r;
    }
    Assembler a(o);
    return a.run(*text, path);
}

} // namespace hpu::tpc
