#!/usr/bin/env python3
"""Compares the kernels of a ptx_diff.sh run with every access to the by-value parameter struct
named by field instead of byte offset, for changes that move fields of AttentionParams, TcParams,
MirrorParams or BackwardParams (a new base struct, say) and should change nothing else.

Each tree's struct layouts come from a small program compiled with its own headers (c++, no
CUDA). In every kernel taking one of those structs, each ld.param address, and each address
register derived from the parameter (mov.b64 of _param_0, add.s64 of a constant), is rewritten
as "field+byte within the field". Equal after that: every load reads the same field as before and
all other PTX is identical. With PTX_DIFF_RUNS=N (old1..N, new1..N) a kernel is equal when any
old compilation equals any new one, as in ptx_diff.sh.

    PTX_DIFF_DIR=/tmp/ptx [PTX_DIFF_RUNS=2] kernels/bench/ptx_diff.sh OLD_TREE NEW_TREE
    kernels/bench/ptx_param_fields.py OLD_TREE NEW_TREE /tmp/ptx
"""
import os
import re
import subprocess
import sys
import tempfile

STRIDES = [f'{t}{w}Stride' for t in 'qkvo' for w in ('Row', 'Head', 'Batch')]
ATTENTION = ['q', 'k', 'v', 'o', 'm', 'l', 'batch', 'heads', 'queries', 'keys', 'headDim'] + \
    STRIDES + ['statHeadStride', 'statBatchStride', 'scale', 'causal']
FIELDS = {
    'AttentionParams': ATTENTION,
    'TcParams': ['q', 'k', 'v', 'o', 'batch', 'heads', 'queries', 'keys', 'headDim'] + STRIDES +
                ['scale', 'causal', 'element'],
    'MirrorParams': ['attention.' + f for f in ATTENTION] +
                    ['blockRows', 'blockCols', 'rescale', 'runningMax', 'fullScores', 'trace'],
    'BackwardParams': ['attention.' + f for f in ATTENTION] +
                      ['dO', 'lse', 'delta', 'dq', 'dk', 'dv', 'blockRows', 'blockCols',
                       'subtractRowDot', 'useLogSumExp', 'accumulateDq', 'maskRecompute',
                       'storeWeights', 'trace'],
}


def layouts(tree, work):
    """{struct: {byte offset: 'field+i'}} with the tree's headers."""
    lines = ['#include "kernels/cuda/params/params.h"', '#include "kernels/cuda/params/tc_params.h"',
             '#include <cstdio>', 'using namespace flashviz::cuda;', 'int main() {']
    for struct, fields in FIELDS.items():
        lines.append(f'{{ static {struct} s;')
        for f in fields:
            lines.append(f'std::printf("{struct} {f} %zu %zu\\n", '
                         f'(size_t)((const char*)&s.{f} - (const char*)&s), sizeof(s.{f}));')
        lines.append('}')
    lines.append('}')
    source, binary = os.path.join(work, 'layout.cpp'), os.path.join(work, 'layout')
    with open(source, 'w') as out:
        out.write('\n'.join(lines) + '\n')
    subprocess.run([os.environ.get('CXX', 'c++'), '-std=c++17', '-I', tree, source, '-o', binary],
                   check=True)
    table = {}
    for line in subprocess.run([binary], check=True, capture_output=True, text=True).stdout.split('\n'):
        if not line:
            continue
        struct, field, offset, size = line.split()
        for i in range(int(size)):
            table.setdefault(struct, {})[int(offset) + i] = f'{field}+{i}'
    return table


def canonical(text, fields):
    base = {}  # address registers holding the parameter's address plus a known offset
    name = lambda offset: fields.get(offset, f'padding{offset}')
    out = []
    for line in text.split('\n'):
        m = re.match(r'\s*mov\.b64\s+(%rd\d+),\s+\S+_param_0;', line)
        if m:
            base[m.group(1)] = 0
            out.append(line)
            continue
        m = re.match(r'(\s*add\.s64\s+)(%rd\d+),\s+(%rd\d+),\s+(-?\d+);', line)
        if m and m.group(3) in base:
            base[m.group(2)] = base[m.group(3)] + int(m.group(4))
            out.append(f'{m.group(1)}{m.group(2)}, {m.group(3)}, <{name(base[m.group(2)])}>;')
            continue
        m = re.match(r'\s*mov\.[bu]64\s+(%rd\d+),\s+(%rd\d+);', line)
        if m and m.group(2) in base:
            base[m.group(1)] = base[m.group(2)]
        if line.lstrip().startswith('ld.param'):
            line = re.sub(r'\[\S+_param_0(?:\+(-?\d+))?\]',
                          lambda mo: f'[param:{name(int(mo.group(1) or 0))}]', line)
            line = re.sub(r'\[(%rd\d+)(?:\+(-?\d+))?\]',
                          lambda mo: f'[param:{name(base[mo.group(1)] + int(mo.group(2) or 0))}]'
                          if mo.group(1) in base else mo.group(0), line)
        out.append(line)
    return '\n'.join(out)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    old_tree, new_tree, work = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(f'{tmp}/old')
        os.makedirs(f'{tmp}/new')
        old, new = layouts(old_tree, f'{tmp}/old'), layouts(new_tree, f'{tmp}/new')
    runs = sorted(d[3:] for d in os.listdir(work) if re.fullmatch(r'old\d+', d))
    same, differ = 0, []
    for kernel in sorted(os.listdir(f'{work}/old1/split')):
        m = re.search(r'NS0_\d+(' + '|'.join(FIELDS) + r')E$', kernel)
        if not m or not os.path.exists(f'{work}/new1/split/{kernel}'):
            continue
        struct = m.group(1)
        olds = [canonical(open(f'{work}/old{r}/split/{kernel}').read(), old[struct]) for r in runs]
        news = [canonical(open(f'{work}/new{r}/split/{kernel}').read(), new[struct]) for r in runs]
        if any(a == b for a in olds for b in news):
            same += 1
        else:
            differ.append(kernel)
    for kernel in differ:
        print('differs with parameter fields named:', kernel)
    print(f'kernels taking a parameter struct, every parameter access named by field: '
          f'{same} identical, {len(differ)} differ')
    sys.exit(1 if differ else 0)


if __name__ == '__main__':
    main()
