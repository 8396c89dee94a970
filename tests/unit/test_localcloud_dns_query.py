"""localcloud.dns.query without a cloud (a fake clock, sleep and DNS server): watch resolves a name in a loop on a fixed
schedule and keeps every answer with its time (what a client saw during a record change); resolve_a says "no address"
only when the server said so with authority."""
import pytest

from localcloud.dns import query
from localcloud.dns.query import Answer, changes, watch

OLD = Answer('NOERROR', ('172.24.4.11', '172.24.4.12'), True)
NEW = Answer('NOERROR', ('172.24.4.12',), True)
GONE = Answer('NXDOMAIN', (), True)


class FakeServer:
    """Answers by the fake time: `script` is [(from_time, answer), ...]; each query costs `latency` seconds."""

    def __init__(self, clock, script, latency=0.003):
        self.clock, self.script, self.latency = clock, script, latency
        self.asked = []

    def __call__(self, name, rdtype, at):
        self.asked.append((self.clock.now, name, rdtype, at))
        answer = [a for start, a in self.script if start <= self.clock.now][-1]
        self.clock.now += self.latency
        return answer


class FakeClock:
    def __init__(self):
        self.now = 100.0
        self.slept = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        assert seconds > 0
        self.slept.append(seconds)
        self.now += seconds


def run(script, **kwargs):
    clock = FakeClock()
    server = FakeServer(clock, script, latency=kwargs.pop('latency', 0.003))
    samples = watch('api.example.test.', ask_fn=server, clock=clock, sleep=clock.sleep, **kwargs)
    return samples, server


def test_samples_every_interval_for_the_duration_with_the_time_each_query_was_sent():
    samples, server = run([(0, OLD)], every_ms=100, duration_s=1.0)
    assert [s.at for s in samples] == pytest.approx([i / 10 for i in range(11)])
    assert {s.answer for s in samples} == {OLD}
    assert server.asked[0][1:] == ('api.example.test.', 'A', None)


def test_a_record_change_is_seen_at_the_sample_after_it_and_changes_lists_each_transition():
    samples, _ = run([(0, OLD), (100.25, NEW), (100.62, GONE)], every_ms=100, duration_s=1.0)
    moments = [(s.at, s.answer) for s in changes(samples)]
    assert moments == [(0.0, OLD), (pytest.approx(0.3), NEW), (pytest.approx(0.7), GONE)]


def test_a_slow_answer_does_not_shift_the_schedule_and_a_late_one_is_sent_at_once():
    samples, _ = run([(0, OLD)], every_ms=100, duration_s=0.5, latency=0.15)
    # query 0 ends at 0.15 (> 0.1): query 1 goes at once; from then the schedule is kept where it can be
    assert [s.at for s in samples] == pytest.approx([0.0, 0.15, 0.3, 0.45])


def test_until_stops_at_the_first_matching_answer():
    samples, server = run([(0, OLD), (100.35, NEW)], every_ms=50, duration_s=10, until=lambda a: a == NEW)
    assert samples[-1].answer == NEW and samples[-1].at == pytest.approx(0.35)
    assert len(server.asked) == len(samples) == 8


def test_the_server_type_and_bad_arguments():
    _, server = run([(0, GONE)], every_ms=10, duration_s=0, rdtype='SOA', at=('127.0.0.1', 5300))
    assert server.asked == [(100.0, 'api.example.test.', 'SOA', ('127.0.0.1', 5300))]
    with pytest.raises(ValueError, match='every_ms must be > 0'):
        watch('x.test.', every_ms=0)


@pytest.mark.parametrize('answer, expected', [(OLD, {'172.24.4.11', '172.24.4.12'}), (GONE, set()),
                                              (Answer('NOERROR', (), True), set())])
def test_resolve_a_gives_the_addresses_or_none_when_the_server_says_so(monkeypatch, answer, expected):
    monkeypatch.setattr(query, 'ask', lambda name, rdtype, at: answer)
    assert query.resolve_a('api.example.test.') == expected


@pytest.mark.parametrize('answer', [Answer('TIMEOUT'), Answer('UNREACHABLE'), Answer('REFUSED'),
                                    Answer('NOERROR', ('172.24.4.11',), False)])
def test_resolve_a_never_concludes_no_address_from_a_server_that_did_not_answer_with_authority(monkeypatch, answer):
    monkeypatch.setattr(query, 'ask', lambda name, rdtype, at: answer)
    with pytest.raises(LookupError, match=f'did not answer for api.example.test. with authority: {answer.rcode}'):
        query.resolve_a('api.example.test.')
