"""Every text scan of the tokenisers (streamnb.features._scan) and its Python twin
(streamnb.features.scan) give the same results, errors included: on the SpamAssassin corpus,
chosen cases and hypothesis' texts (tests/twins.py compares them)."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from twins import same as _same
from twins import untested

from streamnb.features import scan

_scan = pytest.importorskip("streamnb.features._scan", reason="C scans not built")


def same(name: str, make_args: Callable[[], list]) -> tuple:
    return _same(_scan, scan.twin, name, make_args)


def test_every_scan_has_a_test():
    assert untested(scan, globals()) == []


# --- the e-mail tokeniser's scans -----------------------------------------------------------

SCANS = ["email_words", "email_hosts", "url_hosts", "html_signals", "html_text"]


def _scan_same(name: str, text: str) -> None:
    """The scan on text and on its lower-cased form (what the tokeniser gives it); email_words
    also adding to a given set, which it returns."""
    for t in (text, text.lower()):
        same(name, lambda t=t: [t])
        if name == "email_words":
            same(name, lambda t=t: [t, {"x", "given"}])
            words: set[str] = set()
            assert _scan.email_words(t, words) is words


@functools.cache
def _corpus() -> list[str]:
    """The first 300 messages of the SpamAssassin corpus, whole (headers, MIME parts, base64,
    HTML): longer and odder texts than the tokeniser gives the scans. Each also as its bytes
    read as Latin-1 (every byte a character: binary parts, non-UTF-8 bytes as they are)."""
    from streamnb.datasets import iter_spamassassin_stream

    messages = list(itertools.islice(iter_spamassassin_stream(), 300))
    return [m.text for m in messages] + [m.raw.decode("latin-1") for m in messages]


def _corpus_same(name: str) -> None:
    for text in _corpus():
        _scan_same(name, text)


def test_email_words_same_on_the_corpus():
    _corpus_same("email_words")


def test_email_hosts_same_on_the_corpus():
    _corpus_same("email_hosts")


def test_url_hosts_same_on_the_corpus():
    _corpus_same("url_hosts")


def test_url_hosts_finds_what_re_finds():
    """The C scan against the patterns it stands for, on links written to test each branch."""
    text = ("see http://user:pw@[a.b]/x, https://x.y.z. and www.a.b; not www.a, www..x.y, "
            "http://a or https:/x.y; http://@b.c http://a@b.c/d http://[x.y xhttps://f.g-h_i:80/ "
            "https://é@a.b http://a.b@c.d wwww.x.y.z http://www.q.r http://a b@c.d")
    assert _scan.url_hosts(text) == {"[a.b", "x.y.z", "www.a.b", "b.c", "[x.y",
                                        "f.g-h_i", "a.b", "c.d", "www.x.y.z", "www.q.r"}
    same("url_hosts", lambda: [text])


_URL_PIECES = ["http", "https", "://", "www.", ".", "-", "_", "@", "[", "]", "/", " ", "\t",
               "<", ">", '"', "'", "a", "b1", ":", "é", "\x0b", "\x1c", "h", "w", "ww", "s",
               "http:/", "\U0001f600"]


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(_URL_PIECES), max_size=30).map("".join))
def test_url_hosts_same_on_random_links(text):
    same("url_hosts", lambda: [text])


def test_host_tokens_same_on_the_corpus():
    """The tokens of every relay, link and address domain the tokeniser would find."""
    for text in _corpus():
        lowered = text.lower()
        hosts = sorted(_scan.email_hosts(lowered) | _scan.url_hosts(lowered))
        for prefix in ("received:", "url:"):
            same("host_tokens", lambda prefix=prefix, hosts=hosts: [prefix, hosts, {"kept"}])


def test_host_tokens_gives_names_parents_and_addresses():
    tokens = {"kept"}
    _scan.host_tokens("url:", ["Mail.Example.CO.uk.", "[10.0.0.1]", "\u0661\u0662.3.4.5",
                                  "v1.2", "..", "x", "a.b-", "1.2.3.4.5", "mx.mail.com.au",
                                  "a" * 249 + ".com", "b" * 250 + ".com", "1234.1.1.1"],
                         tokens)
    assert tokens == {"kept", "url:mail.example.co.uk", "url:example.co.uk", "url:ip",
                      "url:a.b", "url:mx.mail.com.au", "url:mail.com.au", "url:" + "a" * 249
                      + ".com"}


_HOST_PIECES = ["a", "B", "co", "uk", "com", "net", "au", "1", "22", "333", "4444", ".", "..",
                "-", "[", "]", "_", "é", "İ", "ǅ", "\u0663", "ß", "\U0001f600", "x" * 120]


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_HOST_PIECES), max_size=12).map("".join), max_size=6),
       st.sampled_from(["url:", "received:", "from:", "", "é:"]))
def test_host_tokens_same_on_random_hosts(hosts, prefix):
    same("host_tokens", lambda: [prefix, hosts, set()])


@pytest.mark.parametrize("args", [[3, ["a.b"], set()], ["url:", ["a.b", 3], set()],
                                  ["url:", 3, set()], ["url:", ["a.b"], frozenset()],
                                  ["url:", ["a.b"], []]])
def test_host_tokens_refuses_what_it_cannot_read(args):
    (kind, error, _), _ = same("host_tokens", lambda: [*args])
    assert (kind, error) == ("raised", TypeError)


def test_header_fields_same_on_the_corpus():
    """Every message's header block and fields, and those of blocks starting further on (a
    MIME part's headers start after a boundary line)."""
    for text in _corpus():
        text = "\n" + text
        same("header_fields", lambda text=text: [text, 1, len(text)])
        for start in range(1, len(text), max(len(text) // 20, 1)):
            same("header_fields", lambda text=text, start=start: [text, start, len(text)])


def test_header_fields_reads_blocks_and_folded_fields():
    text = ("\nReceived: from a\n\tby b\nX-Spam: no\nSUBJECT:hi\n there\n\t\nfrom: x@y\n"
            "Not a field\nTo: after the block\n")
    end, fields, content = _scan.header_fields(text, 1, len(text))
    assert text[end:].startswith("Not a field")
    assert fields == [("received", " from a\n\tby b"), ("subject", "hi\n there\n\t"),
                      ("from", " x@y")]
    assert content == {}
    assert _scan.header_fields(text, 1, 20) == (20, [("received", " from a\n\tb")], {})
    assert _scan.header_fields(text, 5, 3) == (5, [], {})  # an end before start: empty
    assert _scan.header_fields("xSubject: a\n", 1, 12) == (12, [], {})  # no newline before
    assert _scan.header_fields(text, 1, len(text), 4) == (  # values cut, the block not
        end, [("received", " fro"), ("subject", "hi\n "), ("from", " x@y")], {})
    # content-* fields by name, the first of each (as email.Message.get reads them)
    mime = "\nContent-Type: text/html\nTo: a\ncontent-type: text/plain\nContent-Disposition: x\n"
    assert _scan.header_fields(mime, 1, len(mime)) == (
        len(mime), [("to", " a")],
        {"content-type": " text/html", "content-disposition": " x"})


_HEADER_PIECES = ["\n", "\r\n", " ", "\t", ":", "Subject:", "subject", "FROM:", "to:", "To",
                  "Content-Type:", "content-transfer-encoding:", "received:", "x-y:", "a",
                  "é", "\x7f", "ſubject:", "\u212a", "\r", "reply-to:", "\U0001f600", "=?"]


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(_HEADER_PIECES), max_size=40).map("".join),
       st.integers(0, 50), st.integers(-5, 60), st.none() | st.integers(0, 12))
def test_header_fields_same_on_random_headers(text, start, end, max_value):
    text = "\n" + text
    same("header_fields", lambda: [text, max(start, 1), end,
                                   *([] if max_value is None else [max_value])])


@pytest.mark.parametrize("args", [[b"\na: b", 1, 5], ["\na: b", 0, 5], ["", 1, 1],
                                  ["\na: b", "1", 5], ["\na: b", 1, None],
                                  ["\na: b", 1, 5, -1], ["\na: b", 1, 5, 2.0]])
def test_header_fields_refuses_what_it_cannot_read(args):
    (kind, _, _), _ = same("header_fields", lambda: [*args])
    assert kind == "raised"


def test_header_tokens_same_on_the_corpus():
    """The tokens of every message's header fields (and what is left to decode), from the
    message as text and as its bytes read as Latin-1."""
    for text in _corpus():
        text = "\n" + text
        _, fields, _ = _scan.header_fields(text, 1, len(text))
        same("header_tokens", lambda fields=fields: [fields, {"kept"}])


def test_header_tokens_reads_words_domains_and_relays():
    fields = [("subject", "FREE money!!! don't 'wait'"),
              ("from", '"Deals" <Offers@Promo.Example.com>, x@y.co.uk (Bob) a<b>c'),
              ("to", "a@b.org, <c@D.Example.NET>, e@f, @g.h."), ("x-mailer", "Mailer 1.0"),
              ("received", "from mx.Example.com ([10.0.0.1])"), ("cc", "é@x.org"),
              ("received", "by relay.example.org"), ("subject", "=?utf-8?q?caf=C3=A9?="),
              ("message-id", "<1@mail.example.com>")]
    tokens = {"kept"}
    rest = _scan.header_tokens(fields, tokens)
    assert rest == [("cc", "é@x.org"), ("subject", "=?utf-8?q?caf=C3=A9?=")]
    assert tokens == {
        "kept", "subject:free", "subject:money!!!", "subject:don't", "subject:wait",
        "from:deals", "from:bob", "from:promo.example.com", "from:example.com",
        "from:y.co.uk", "to:b.org", "to:d.example.net", "to:g.h", "x-mailer:mailer",
        "received:mx.example.com", "received:example.com", "received:ip",
        "received:relay.example.org", "received:example.org", "message-id:mail.example.com"}
    # an address and the words around it: <...> anywhere, a run holding "@" after a space
    tokens = set()
    _scan.header_tokens([("from", "ab<c d>ef gh<ij kl@mn op@qr.st uv")], tokens)
    assert tokens == {"from:ab", "from:ef", "from:gh", "from:ij", "from:uv", "from:qr.st"}


_FIELD_NAMES = ["subject", "from", "x-mailer", "to", "cc", "reply-to", "message-id",
                "received"]
_FIELD_PIECES = ["a", "B", "é", "1", "@", ".", "-", "_", "<", ">", " ", "\t", "\n", "\x1c",
                 "'", "$", "!", "=?", "?=", "x.org", "Mail.Example.co.uk", "10.0.0.1", ",",
                 "\U0001f600", "a" * 41, "\u0663", "[", "]", "(", '"']


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_FIELD_NAMES),
                          st.lists(st.sampled_from(_FIELD_PIECES), max_size=20).map("".join)),
                max_size=6))
def test_header_tokens_same_on_random_fields(fields):
    same("header_tokens", lambda: [list(fields), set()])


@pytest.mark.parametrize("args", [[[("subject", "a")], frozenset()], [[("subject", "a")], []],
                                  [3, set()], ["ab", set()], [[("subject", b"a")], set()],
                                  [[["subject", "a"]], set()], [[("subject", "a", "b")], set()],
                                  [[("subject", "a"), ("date", "x")], set()],
                                  [[("Subject", "a")], set()]])
def test_header_tokens_refuses_what_it_cannot_read(args):
    (kind, error, _), _ = same("header_tokens", lambda: [*args])
    assert kind == "raised" and error in (TypeError, ValueError)


def test_html_text_same_on_the_corpus():
    _corpus_same("html_text")


HOSTILE = [
    "",
    "'" * 1000,
    "a" * 1_000_000,  # one word of a million characters
    " ".join(f"w{i} w{i % 7} x{i}.y{i % 3}.org" for i in range(5000)) + " é'x'",  # > the C table
    "<" * 100_000 + ">" * 100_000,
    "<!--" * 50_000,  # comments never closed
    "-->" * 10_000 + "<!--x",
    "<script" + "x" * 100_000,  # a script never closed runs to the end
    "<p>a<!-- b --><script>c</script><td>d" * 2000 + "<!--e",
    "&amp;&#x41;&#65;&#xZZ;&#99999999999;&;&&#;&nbsp" * 1000,  # broken entities stay as text
    bytes(range(256)).decode("latin-1") * 100,  # binary
    "\x00" * 1000 + "a.b\x00c.d",
    "\U0001f600\u0663\u00e9ǅİ\ud800".join(["a.b", "x'y", "<p>", "don't"]) * 100,  # lone surrogate
    "..." + "a." * 10_000 + "-",
]


@pytest.mark.parametrize("name", SCANS)
@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_email_scans_same_on_hostile_text(name, text):
    _scan_same(name, text)


@pytest.mark.parametrize("name", SCANS)
@pytest.mark.parametrize("value", [b"a.b c", None, 3, ["a"], bytearray(b"x")])
def test_email_scans_refuse_what_is_not_str(name, value):
    (kind, error, _), _ = same(name, lambda: [value])
    assert (kind, error) == ("raised", TypeError)


def test_email_words_adds_to_a_set_only():
    (kind, error, _), _ = same("email_words", lambda: ["a b", frozenset()])
    assert (kind, error) == ("raised", TypeError)


@pytest.mark.parametrize("name", SCANS)
@settings(max_examples=300, deadline=None)
@given(
    text=st.one_of(
        st.text(),
        st.text(alphabet="ab'$!_.-é\u0663 \n<>@x1", max_size=200),
        st.lists(st.sampled_from(["don't", "'", "''x''", "a" * 45, "é" * 41, "a.b", "-.x.-",
                                  "1.2.3.4", "_", " ", "\U0001f600", "ǅ", "İ"]))
        .map("".join),
    )
)
def test_email_scans_same_on_random_text(name, text):
    _scan_same(name, text)


_HTML_PIECES = ["<", ">", "<!--", "-->", "<script", "</script", "<style", "</style", "<p", "</p",
                "<br/>", "<a href=x>", "<!", "<?x", "</", "<pre", "<h1", "<h7", "<td>", "</td>",
                "<divx", "<div-", "<p\u00e9", "<scripts", "<style-", "<b>", "é", "x", " ", "-",
                "\u0663", "\U0001f600", "&amp;", "\n"]


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(_HTML_PIECES), max_size=30).map("".join) | st.text())
def test_html_text_same_on_random_markup(html):
    same("html_text", lambda: [html])


def test_html_signals_same_on_the_corpus():
    _corpus_same("html_signals")


def test_html_signals_finds_tags_and_links():
    html = ("<img src=x><imgx><table-x><font\u00e9><form>< iframe><a\thref = 'x'>"
            "<a href=>")
    assert _scan.html_signals(html) == {"img", "form", "a"}
    assert _scan.html_signals("<a name=x href\n=\ny>") == {"a"}
    for no_link in ("<a href=>", "<a xhref=y>", "<a-href=y>", "<ahref=y>", "<a href", "<a >",
                    "<a x<y href=z>", "<a\u00a0hre=f>"):
        assert _scan.html_signals(no_link) == set(), no_link


_SIGNAL_PIECES = ["<", ">", "a", "img", "font", "form", "table", "iframe", "script", "embed",
                  "href", "=", " ", "\t", "\u00a0", "\u2028", "x", "-", "_", "é", "\u0663",
                  "'", '"', "\n", "<a ", "<a href=", "hre"]


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(_SIGNAL_PIECES), max_size=30).map("".join))
def test_html_signals_same_on_random_markup(html):
    same("html_signals", lambda: [html])

