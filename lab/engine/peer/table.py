"""One table from the test2json outputs of lab/engine/peer/run.sh: test, result per build, seconds, why it did not pass.

    python3 lab/engine/peer/table.py unpatched=<unpatched.json> patched=<patched.json>

Result per test: pass, FAIL, skip, or `-` (not run in that build). The reason is the test's skip message, or the
first error of a failure (a Terraform diagnostic's summary line, else the first line of the test's own output that
is not the framework's), with the cloud's ids and random names left as they are. Last lines: totals per build, and
every test that passes in the first build and not in the second (what the patches must never do), and the reverse.
"""
import json
import re
import sys

NOISE = re.compile(r'^(=== (RUN|PAUSE|CONT|NAME)|--- (PASS|FAIL|SKIP)|PASS$|FAIL$|ok |coverage:)')
CONTEXT = re.compile(r'^(with |on \S+ line \d+|\d+:)')   # "with <address>", "on <file> line N", the source line
STEP = re.compile(r'^\S+_test\.go:\d+: ')                # the framework's next message


def read(path):
    tests = {}
    for line in open(path, encoding='utf-8', errors='replace'):
        if not line.startswith('{'):
            continue
        ev = json.loads(line)
        name = ev.get('Test')
        if not name or '/' in name:
            continue
        t = tests.setdefault(name, {'result': None, 'seconds': None, 'output': []})
        if ev['Action'] == 'output':
            t['output'].append(ev['Output'].rstrip('\n'))
        elif ev['Action'] in ('pass', 'fail', 'skip'):
            t['result'], t['seconds'] = ev['Action'], ev.get('Elapsed')
    return tests


def reason(t):
    if t['result'] == 'pass':
        return ''
    if t['result'] is None:
        return 'no result (the run timed out or was killed)' if t['output'] else 'not run'
    lines = [l.strip() for l in t['output'] if l.strip() and not NOISE.match(l.strip())]
    if t['result'] == 'skip':
        return lines[-1] if lines else ''
    for i, l in enumerate(lines):  # a Terraform diagnostic: "Error: <summary>", source context, then the detail
        if l.startswith('Error: '):
            rest = [d for d in lines[i + 1:] if not CONTEXT.match(d)]
            detail = rest[0] if rest and not rest[0].startswith('Error: ') and not STEP.match(rest[0]) else ''
            return f'{l} {detail}'.strip()
    return lines[0] if lines else '(no output)'


def main(args):
    builds = [a.split('=', 1) for a in args]
    runs = {b: read(p) for b, p in builds}
    names = sorted({n for r in runs.values() for n in r})
    mark = {'pass': 'pass', 'fail': 'FAIL', 'skip': 'skip', None: '-'}
    head = ['test'] + [b for b, _ in builds] + [f'{b} s' for b, _ in builds] + ['reason (not passed)']
    print('| ' + ' | '.join(head) + ' |')
    print('|' + '---|' * len(head))
    for n in names:
        ts = [runs[b].get(n, {'result': None, 'seconds': None, 'output': []}) for b, _ in builds]
        reasons = [reason(t) for t in ts]
        if len(set(r for r in reasons if r)) <= 1 and (all(reasons) or len(builds) == 1):
            why = next((r for r in reasons if r), '')   # the same reason in every build
        else:
            why = '; '.join(f'{b}: {r}' for (b, _), r in zip(builds, reasons) if r)
        secs = [f'{t["seconds"]:.1f}' if t['seconds'] is not None else '-' for t in ts]
        cells = [f'`{n}`'] + [mark[t['result']] for t in ts] + secs + [why.replace('|', '\\|')[:400]]
        print('| ' + ' | '.join(cells) + ' |')
    print()
    for b, _ in builds:
        rs = [t['result'] for t in runs[b].values() if t['result']]
        secs = sum(t['seconds'] or 0 for t in runs[b].values())
        print(f'{b}: {rs.count("pass")} passed, {rs.count("fail")} failed, {rs.count("skip")} skipped'
              f' of {len(rs)} ({secs:.0f} s in tests)')
    if len(builds) >= 2:
        base, other = builds[0][0], builds[1][0]
        broken = [n for n in names if runs[base].get(n, {}).get('result') == 'pass'
                  and runs[other].get(n, {}).get('result') != 'pass']   # failed, skipped or not run
        fixed = [n for n in names if runs[base].get(n, {}).get('result') == 'fail'
                 and runs[other].get(n, {}).get('result') == 'pass']
        print(f'passing {base}, not passing {other}: {", ".join(broken) if broken else "none"}')
        print(f'failing {base}, passing {other}: {", ".join(fixed) if fixed else "none"}')


if __name__ == '__main__':
    main(sys.argv[1:])
