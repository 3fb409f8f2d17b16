"""Shrink a mismatching program: drop top-level statements (last first) and output slots while
both platforms still build it and still disagree."""
from .runner import GLOBAL, SLOTS, batch_source


def _program_text(prog, items, outputs):
    saved = prog.items, prog.outputs
    prog.items, prog.outputs = items, outputs
    try:
        return batch_source([prog])
    finally:
        prog.items, prog.outputs = saved


def mismatches(prog, items, outputs, devs, in_host):
    src, hdr = _program_text(prog, items, outputs)
    outs = [d.run(src, hdr, ["difftest_batch"], in_host, GLOBAL * SLOTS)[0] for d in devs]
    if any(o is None for o in outs):
        return False
    return not (outs[0] == outs[1]).all()


def reduce(prog, devs, in_host, budget=200):
    """(source, header) of a smaller program that still mismatches."""
    items, outputs = list(prog.items), list(prog.outputs)
    tries = 0
    changed = True
    while changed and tries < budget:
        changed = False
        for k in range(len(outputs) - 1, -1, -1):
            cand = outputs[:k] + outputs[k + 1:]
            tries += 1
            if cand and mismatches(prog, items, cand, devs, in_host):
                outputs, changed = cand, True
        for k in range(len(items) - 1, -1, -1):
            cand = items[:k] + items[k + 1:]
            tries += 1
            if mismatches(prog, cand, outputs, devs, in_host):
                items, changed = cand, True
    return _program_text(prog, items, outputs)
