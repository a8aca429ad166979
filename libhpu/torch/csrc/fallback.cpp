// SPDX-License-Identifier: MIT
// fallback.cpp - the CPU fallback: every op without an HPU kernel runs on
// the CPU. PyTorch's boxed cpu_fallback does the moves: the HPU tensors
// among the arguments are copied to the host (through _copy_from, so by
// DMA), the op's CPU kernel runs, and its results and the arguments it
// mutates are copied back to their HPUs. Ops with tensor-list arguments
// (Tensor[], Tensor?[]), which 1.13's does not handle, go through ours. Each use is counted by op name
// (hpu_torch.core.fallback_counts()); with PT_HPU_LOG_FALLBACK=1 the first
// use of each op prints one warning. A random op's generator is replaced
// for the CPU kernel (host_generators): the HPU's generators seed its
// draws, PyTorch's CPU generator is not advanced by them.
//
// Copyright (c) 2026 The hpu authors
#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "hpu_torch.h"

namespace hpu_torch {

namespace {

std::mutex g_counts_mutex;
std::map<std::string, std::int64_t> g_counts; // NOLINT: the process's counts

bool log_fallback()
{
    static const bool on = [] {
        const char *v = std::getenv("PT_HPU_LOG_FALLBACK"); // NOLINT(concurrency-mt-unsafe): read once
        return v != nullptr && std::strcmp(v, "0") != 0 && *v != '\0';
    }();
    return on;
}

at::Tensor to_cpu(const at::Tensor &t, c10::optional<c10::Device> *device)
{
    if (!t.defined() || !is_hpu(t))
        return t;
    if (!device->has_value())
        *device = t.device();
    return t.cpu();
}

// The CPU result of a written argument into its HPU tensor (an out=
// argument resized first).
void copy_back(const at::Tensor &hpu, const at::Tensor &cpu)
{
    if (!hpu.defined() || !is_hpu(hpu))
        return;
    if (hpu.sizes() != cpu.sizes())
        hpu.resize_(cpu.sizes());
    hpu.copy_(cpu);
}

bool has_tensor_list(const std::vector<c10::IValue> &args)
{
    return std::any_of(args.begin(), args.end(),
                       [](const c10::IValue &v) { return v.isTensorList() || v.isOptionalTensorList(); });
}

// PyTorch 1.13's cpu_fallback for ops taking Tensor[] or Tensor?[]
// arguments, which it neither moves (Tensor?[]) nor copies back when
// written (Tensor(a!)[]): every HPU tensor among the arguments to the
// host, the CPU kernel, every argument the schema marks as written copied
// back, the returns that alias a written argument that argument, the other
// tensors returned moved to the HPU of the first HPU argument.
void list_fallback(const c10::OperatorHandle &op, torch::jit::Stack *stack)
{
    const auto &schema = op.schema();
    const std::size_t nargs = schema.arguments().size();
    const std::size_t first = stack->size() - nargs;
    const std::vector<c10::IValue> originals(stack->begin() + static_cast<std::ptrdiff_t>(first), stack->end());
    c10::optional<c10::Device> device;
    for (std::size_t i = 0; i < nargs; ++i) {
        c10::IValue &slot = (*stack)[first + i];
        if (slot.isTensor()) {
            slot = to_cpu(slot.toTensor(), &device);
        } else if (slot.isTensorList()) {
            const c10::List<at::Tensor> in = slot.toTensorList();
            c10::List<at::Tensor> l;
            for (std::size_t j = 0; j < in.size(); ++j)
                l.push_back(to_cpu(in.get(j), &device));
            slot = l;
        } else if (slot.isOptionalTensorList()) {
            const c10::List<c10::optional<at::Tensor>> in = slot.toOptionalTensorList();
            c10::List<c10::optional<at::Tensor>> l;
            for (std::size_t j = 0; j < in.size(); ++j) {
                const c10::optional<at::Tensor> t = in.get(j);
                l.push_back(t.has_value() ? c10::optional<at::Tensor>(to_cpu(*t, &device)) : c10::nullopt);
            }
            slot = l;
        }
    }
    const std::vector<c10::IValue> on_cpu(stack->begin() + static_cast<std::ptrdiff_t>(first), stack->end());
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);

    for (std::size_t i = 0; i < nargs; ++i) {
        const c10::AliasInfo *alias = schema.arguments()[i].alias_info();
        if (alias == nullptr || !alias->isWrite())
            continue;
        if (originals[i].isTensor()) {
            copy_back(originals[i].toTensor(), on_cpu[i].toTensor());
        } else if (originals[i].isTensorList()) {
            const c10::List<at::Tensor> h = originals[i].toTensorList();
            const c10::List<at::Tensor> c = on_cpu[i].toTensorList();
            for (std::size_t j = 0; j < h.size(); ++j)
                copy_back(h.get(j), c.get(j));
        }
    }

    const std::size_t nrets = schema.returns().size();
    const std::size_t rfirst = stack->size() - nrets;
    for (std::size_t r = 0; r < nrets; ++r) {
        c10::IValue &slot = (*stack)[rfirst + r];
        const c10::AliasInfo *ralias = schema.returns()[r].alias_info();
        bool aliased = false;
        if (ralias != nullptr && ralias->isWrite()) {
            for (std::size_t i = 0; i < nargs && !aliased; ++i) {
                const c10::AliasInfo *a = schema.arguments()[i].alias_info();
                if (a != nullptr && a->beforeSets() == ralias->beforeSets()) {
                    slot = originals[i];
                    aliased = true;
                }
            }
        }
        if (aliased || !device.has_value())
            continue;
        if (slot.isTensor()) {
            const at::Tensor t = slot.toTensor();
            if (t.defined())
                slot = t.to(*device);
        } else if (slot.isTensorList()) {
            const c10::List<at::Tensor> in = slot.toTensorList();
            c10::List<at::Tensor> l;
            for (std::size_t j = 0; j < in.size(); ++j) {
                const at::Tensor t = in.get(j);
                l.push_back(t.defined() ? t.to(*device) : t);
            }
            slot = l;
        }
    }
}

// The HPU device among the arguments (a factory's device, tensors and
// tensor lists): the first.
c10::optional<c10::Device> hpu_device(const std::vector<c10::IValue> &args)
{
    for (const c10::IValue &v : args) {
        if (v.isDevice() && v.toDevice().type() == c10::DeviceType::HPU)
            return v.toDevice();
        if (v.isTensor() && v.toTensor().defined() && is_hpu(v.toTensor()))
            return v.toTensor().device();
        if (v.isTensorList()) {
            for (const at::Tensor &t : v.toTensorList().vec()) {
                if (t.defined() && is_hpu(t))
                    return t.device();
            }
        }
    }
    return c10::nullopt;
}

// A random op's Generator? arguments for its CPU kernel, on the stack:
// none or an HPU generator becomes a CPU generator seeded by the HPU's
// (next_seed: the one given, or the device's default); a CPU generator
// given stays.
void host_generators(const c10::FunctionSchema &schema, torch::jit::Stack *stack)
{
    const std::size_t nargs = schema.arguments().size();
    const std::size_t first = stack->size() - nargs;
    c10::optional<c10::Device> device;
    bool looked = false;
    for (std::size_t i = 0; i < nargs; ++i) {
        c10::TypePtr type = schema.arguments()[i].type();
        if (const auto opt = type->cast<c10::OptionalType>())
            type = opt->getElementType();
        if (type->kind() != c10::TypeKind::GeneratorType)
            continue;
        if (!looked) {
            device = hpu_device({stack->begin() + static_cast<std::ptrdiff_t>(first), stack->end()});
            looked = true;
        }
        if (!device.has_value())
            return;
        c10::IValue &slot = (*stack)[first + i];
        const c10::optional<at::Generator> gen =
            slot.isGenerator() ? c10::optional<at::Generator>(slot.toGenerator()) : c10::nullopt;
        slot = cpu_generator_for(gen, *device);
    }
}

} // namespace

void cpu_fallback(const c10::OperatorHandle &op, torch::jit::Stack *stack)
{
    const auto &schema = op.schema();
    std::string name = schema.name();
    if (!schema.overload_name().empty())
        name += "." + schema.overload_name();
    bool first = false;
    {
        const std::lock_guard<std::mutex> g(g_counts_mutex);
        first = g_counts[name]++ == 0;
    }
    if (first && log_fallback())
        TORCH_WARN("HPU: ", name, " has no HPU kernel; it runs on the CPU (its tensors are copied to the host and back)");
    host_generators(schema, stack);
    const std::size_t nargs = schema.arguments().size();
    const std::vector<c10::IValue> args(stack->end() - static_cast<std::ptrdiff_t>(nargs), stack->end());
    if (has_tensor_list(args)) {
        list_fallback(op, stack);
        return;
    }
    at::native::cpu_fallback(op, stack);
}

void count_fallback(const std::string &name)
{
    bool first = false;
    {
        const std::lock_guard<std::mutex> g(g_counts_mutex);
        first = g_counts[name]++ == 0;
    }
    if (first && log_fallback())
        TORCH_WARN("HPU: ", name, " has no exact HPU kernel; it runs on the CPU (its tensors are copied to the host and back)");
}

std::map<std::string, std::int64_t> fallback_counts()
{
    const std::lock_guard<std::mutex> g(g_counts_mutex);
    return g_counts;
}

void reset_fallback_counts()
{
    const std::lock_guard<std::mutex> g(g_counts_mutex);
    g_counts.clear();
}

TORCH_LIBRARY_IMPL(_, HPU, m)
{
    m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}

} // namespace hpu_torch
