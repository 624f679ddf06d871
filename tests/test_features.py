"""Tests of the e-mail and SMS tokenisers and their river transformers."""

from __future__ import annotations

import base64
import quopri
import re

import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from river import base, checks, naive_bayes

from streamnb.features import EmailTokens, SMSTokens, tokenize_email, tokenize_sms
from streamnb.features import email as email_module


def message(*headers: str, body: str = "") -> str:
    return "\n".join(headers) + "\n\n" + body


def multipart(*parts: str, boundary: str = "XYZ", headers: tuple[str, ...] = ()) -> str:
    lines = [*headers, f'Content-Type: multipart/mixed; boundary="{boundary}"', ""]
    for part in parts:
        lines += [f"--{boundary}", part]
    lines.append(f"--{boundary}--")
    return "\n".join(lines) + "\n"


# --- Headers ------------------------------------------------------------------------------


def test_subject_words_are_prefixed_and_lower_cased():
    tokens = tokenize_email(message("Subject: Cheap VIAGRA now!!!"))
    assert {"subject:cheap", "subject:viagra", "subject:now!!!"} <= tokens
    assert "cheap" not in tokens  # header words are not body words


@pytest.mark.parametrize(
    "subject",
    [
        "=?iso-8859-1?q?Caf=E9_gratuit?=",
        "=?utf-8?b?Q2Fmw6kgZ3JhdHVpdA==?=",
        "=?utf-8?B?Q2Fmw6k=?= =?utf-8?B?IGdyYXR1aXQ?=",  # adjacent words join, padding lost
    ],
)
def test_encoded_subject_words_are_decoded(subject):
    assert {"subject:café", "subject:gratuit"} <= tokenize_email(message(f"Subject: {subject}"))


def test_broken_encoded_words_are_kept_as_text():
    tokens = tokenize_email(message("Subject: =?utf-8?B?!!?= =?no-such-charset?Q?hello?="))
    assert "subject:hello" in tokens


def test_from_gives_name_words_and_domains_but_not_the_local_part():
    tokens = tokenize_email(message('From: "Jane Doe" <jane.doe@mail.example.co.uk>'))
    assert {"from:jane", "from:doe", "from:mail.example.co.uk", "from:example.co.uk"} <= tokens
    assert "from:co.uk" not in tokens  # a registry, not a sender
    assert not any("jane.doe" in token for token in tokens)


def test_recipient_reply_to_and_message_id_give_domains_only():
    tokens = tokenize_email(
        message(
            "To: Bob <bob@corp.example.com>, alice@other.org",
            "Reply-To: replies@bulk.example.net",
            "Message-ID: <123.abc@mailer.example.biz>",
            "X-Mailer: Microsoft Outlook Express 6.00",
        )
    )
    assert {"to:corp.example.com", "to:other.org", "reply-to:bulk.example.net"} <= tokens
    assert {"message-id:mailer.example.biz", "x-mailer:microsoft", "x-mailer:outlook"} <= tokens
    assert not any(token.startswith("to:") and "bob" in token for token in tokens)


def test_received_gives_hosts_and_one_ip_flag_but_no_octets():
    tokens = tokenize_email(
        message(
            "Received: from relay.spam.example.com (relay.spam.example.com [10.1.2.3])"
            "\n\tby mx.example.org (8.11.6/8.11.6) with ESMTP id g7MBYrZ04811",
            "Received: from unknown (HELO 192.168.0.1) by 172.16.0.5",
        )
    )
    received = {token for token in tokens if token.startswith("received:")}
    assert received == {
        "received:relay.spam.example.com",
        "received:spam.example.com",
        "received:example.com",
        "received:mx.example.org",
        "received:example.org",
        "received:ip",
    }
    assert not any(re.fullmatch(r"\d+", token) for token in tokens)  # no "10", "1", ...


def test_mbox_from_line_is_not_a_header():
    tokens = tokenize_email("From sender@example.com  Tue Aug  6 11:51:02 2002\nSubject: hi\n\nyo")
    assert "subject:hi" in tokens
    assert not any("sender" in token or "2002" in token for token in tokens)


def test_crlf_line_endings():
    assert {"subject:hello", "world"} <= tokenize_email("Subject: hello\r\n\r\nworld\r\n")


# --- Bodies -------------------------------------------------------------------------------


def test_word_rules():
    tokens = tokenize_email(
        message(body="I don't say 'hello' to $100 FREE!!! offers a " + "x" * 45 + " " + "b" * 41)
    )
    assert {"don't", "say", "hello", "to", "$100", "free!!!", "offers"} <= tokens
    assert not any(token.startswith("'") or token.endswith("'") for token in tokens)
    assert "i" not in tokens and "a" not in tokens  # single characters are dropped
    assert {"skip:x:40", "skip:b:40"} <= tokens
    assert not any(len(token) > 40 for token in tokens)


def test_urls_and_email_addresses_in_the_body():
    tokens = tokenize_email(
        message(
            body="Visit http://user@www.deals.example.com:8080/x or HTTPS://Shop.Example.net "
            "or www.cheap.example.org, or http://61.1.2.3/ and mail sales@biz.example.info"
        )
    )
    assert {
        "url:www.deals.example.com",
        "url:deals.example.com",
        "url:example.com",
        "url:shop.example.net",
        "url:example.net",
        "url:www.cheap.example.org",
        "url:cheap.example.org",
        "url:example.org",
        "url:ip",
        "email:biz.example.info",
    } <= tokens


def test_html_is_stripped_and_leaves_signals():
    html = (
        "<html><head><style>p {color: red}</style><script>var hidden = 1;</script></head>"
        '<body><p>Great&nbsp;offer &amp; more</p><font color="red">V<!-- x -->iagra</font> '
        '<a href="http://click.example.com/track">click</a><img src="http://img.example.net/a.gif">'
        "<table><tr><td>cell</td><td>two</td></tr></table></body></html>"
    )
    tokens = tokenize_email(message("Content-Type: text/html; charset=us-ascii", body=html))
    assert {"great", "offer", "more", "viagra", "click", "cell", "two"} <= tokens
    assert {"html:font", "html:a-href", "html:img", "html:table"} <= tokens
    assert {"url:click.example.com", "url:img.example.net"} <= tokens
    assert "celltwo" not in tokens  # table cells are separate words
    assert not {"color", "red", "hidden", "var", "nbsp", "amp", "href", "font"} & tokens


def test_html_unknown_marked_section_does_not_raise():
    tokens = tokenize_email(message("Content-Type: text/html", body="<p>hello</p><![foo bar>x"))
    assert "hello" in tokens


def test_multipart_transfer_encodings_and_charsets_are_decoded():
    latin = base64.b64encode("café crème".encode("latin-1")).decode()
    quoted = quopri.encodestring("naïve façade".encode()).decode()
    raw = multipart(
        f"Content-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: base64\n\n"
        f"{latin}",
        f"Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n"
        f"\n{quoted}",
        "Content-Type: text/plain; charset=no-such-charset\nContent-Transfer-Encoding: base64\n\n"
        + base64.b64encode("déjà".encode("latin-1")).decode(),
    )
    tokens = tokenize_email(raw)
    assert {"café", "crème", "naïve", "façade"} <= tokens
    assert "déjà" in tokens  # unknown charset: Latin-1 fallback
    assert {"content-type:multipart/mixed", "content-type:text/plain"} <= tokens
    assert {"charset:iso-8859-1", "charset:utf-8", "charset:no-such-charset"} <= tokens


def test_attachments_give_only_their_type_and_extension():
    payload = base64.b64encode(b"MZ secretpayloadword " * 20).decode()
    raw = multipart(
        "Content-Type: text/plain\n\nsee attached",
        'Content-Type: application/octet-stream; name="invoice.PDF.exe"\n'
        'Content-Disposition: attachment; filename="invoice.PDF.exe"\n'
        f"Content-Transfer-Encoding: base64\n\n{payload}",
        "Content-Type: text/plain\nContent-Disposition: attachment; filename*=utf-8''notes.txt\n"
        "\nattachedtextword",
        "Content-Type: image/gif\n\nR0lGODlh",
    )
    tokens = tokenize_email(raw)
    assert {"see", "attached"} <= tokens
    assert {
        "attachment:application/octet-stream",
        "attachment:text/plain",
        "attachment:image/gif",
        "filename-ext:exe",
        "filename-ext:txt",
    } <= tokens
    assert not {"secretpayloadword", "attachedtextword", "r0lgodlh"} & tokens


def test_eight_bit_bytes_are_decoded_with_the_declared_charsets():
    raw = (
        "Subject: r\xe9sum\xe9\nContent-Type: text/plain; charset=iso-8859-1\n\n"
        "pr\xeat \xe0 t\xe9l\xe9charger"
    ).encode("latin-1")
    tokens = tokenize_email(raw)
    assert {"subject:résumé", "prêt", "télécharger"} <= tokens


def test_bytes_and_str_agree_on_ascii_messages():
    raw = multipart(
        "Content-Type: text/html\n\n<b>Hello</b> http://a.example.com", headers=("Subject: x1",)
    )
    assert tokenize_email(raw) == tokenize_email(raw.encode("ascii"))


def test_the_result_is_a_frozenset_of_lower_case_strings():
    tokens = tokenize_email(message("Subject: MiXeD", body="UPPER Case http://WWW.Example.COM"))
    assert isinstance(tokens, frozenset)
    assert all(isinstance(token, str) and token == token.lower() for token in tokens)


# --- Robustness ---------------------------------------------------------------------------

_FRAGMENTS = st.sampled_from(
    [
        "From x  Mon Jan  1 00:00:00 2002\n",
        'Content-Type: multipart/mixed; boundary="b"\n',
        "Content-Type: multipart/alternative\n",
        "Content-Type: message/rfc822\n",
        "Content-Type: text/html; charset=gb2312\n",
        "Content-Type: text/plain; charset=idna\n",
        "Content-Type: text/plain; charset=rot13\n",
        "Content-Type: text/plain; charset=utf-16\n",
        "Content-Type: text/plain; charset*=utf-8''%e2%82\n",
        "Content-Transfer-Encoding: base64\n",
        "Content-Transfer-Encoding: quoted-printable\n",
        "Content-Transfer-Encoding: x-uuencode\n",
        'Content-Disposition: attachment; filename="a.exe"\n',
        "Content-Disposition: attachment; filename*=bad''%ff.zip\n",
        "Subject: =?utf-8?b?w6k=?= =?bogus?q?=FF?= =?utf-8?B?!!?=\n",
        'From: "A" <a@b.c>, ((\n',
        "Received: from a.b.c ([1.2.3.4]) by x.y\n",
        "Message-ID: <@>\n",
        "\n",
        "\r\n",
        "--b\n",
        "--b--\n",
        "<![if !x]>",
        "<![foo bar>",
        "<!doctype",
        "<a href='http://[::1]/'>",
        "<img src=x>",
        "&#xffffffff;",
        "<script>",
        "begin 644 a\n",
        "=\n",
        "=ZZ",
        "é",
        "\udcff",
        "\ud800",
        "\x00",
        "http://",
        "www.",
        "@",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(_FRAGMENTS, st.text(max_size=12)), max_size=40), st.booleans())
def test_never_raises_on_malformed_messages(fragments, as_bytes):
    text = "".join(fragments)
    tokens = tokenize_email(text.encode("utf-8", "surrogatepass") if as_bytes else text)
    assert isinstance(tokens, frozenset)
    assert all(isinstance(token, str) for token in tokens)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3000))
@example(raw=b"From ")  # an mbox separator and nothing else
@example(raw=b"From x")
def test_never_raises_on_random_bytes(raw):
    assert isinstance(tokenize_email(raw), frozenset)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=3000))
def test_never_raises_on_random_text(raw):
    assert isinstance(tokenize_email(raw), frozenset)


def test_html_comment_without_its_end_is_a_tag():
    # spam's "<!--#rotate>" with no "-->" after it: the words that follow count. (Before a
    # later "-->" it would open a comment running to it, as in browsers.)
    html = "<p>Terrific!! <!--#rotate>Instantly attract</p> more text"
    tokens = tokenize_email(message("Content-Type: text/html", body=html))
    assert {"terrific!!", "instantly", "attract", "more", "text"} <= tokens
    assert "rotate" not in tokens
    tokens = tokenize_email(message("Content-Type: text/html", body="a <!-- hid -->den b"))
    assert "den" in tokens and "hid" not in tokens


def test_links_anywhere_in_the_html_source():
    html = '<form action="http://collect.example.com/x"><input src=www.pics.example.org></form>'
    tokens = tokenize_email(message("Content-Type: text/html", body=html))
    assert {"url:collect.example.com", "url:www.pics.example.org", "html:form"} <= tokens


def test_multipart_without_its_closing_boundary_reads_the_last_part_to_the_end():
    raw = multipart("Content-Type: text/plain\n\nfirstpart", "Content-Type: text/plain\n\nlastpart")
    raw = raw.replace("--XYZ--\n", "")
    assert {"firstpart", "lastpart"} <= tokenize_email(raw)


def test_multipart_whose_boundary_never_comes_is_read_as_text():
    raw = message('Content-Type: multipart/mixed; boundary="nowhere"', body="plain words here")
    tokens = tokenize_email(raw)
    assert {"plain", "words", "here", "content-type:multipart/mixed"} <= tokens


def test_preamble_and_epilogue_are_not_read():
    raw = multipart("Content-Type: text/plain\n\ninside").replace(
        "\n--XYZ\n", "\npreambleword\n--XYZ\n", 1
    ) + "epilogueword\n"
    tokens = tokenize_email(raw)
    assert "inside" in tokens
    assert not {"preambleword", "epilogueword"} & tokens


def test_forwarded_message_parts_are_read():
    inner = message("Subject: inner", "Content-Type: text/html", body="<b>forwardedword</b>")
    raw = multipart(f"Content-Type: message/rfc822\n\n{inner}")
    tokens = tokenize_email(raw)
    assert {"forwardedword", "content-type:message/rfc822", "content-type:text/html"} <= tokens
    assert "subject:inner" not in tokens  # header tokens come from the top-level header only


# --- Hostile input: bounded work ----------------------------------------------------------
# Each input is about a megabyte: a quadratic path (a regex retried from every character, a
# boundary searched again for every part) would take hours on it, a linear one takes
# milliseconds. The assertions are on the work done, counted by wrapping the tokeniser's steps,
# never on the clock.

MB = 1 << 20


@pytest.fixture
def work(monkeypatch):
    """Counts of the tokeniser's work: characters given to the word scanner, entities read and
    the deepest nesting level reached."""
    counts = {"characters": 0, "entities": 0, "depth": 0}
    words, entity = email_module._words, email_module._Reader.entity

    def counting_words(text, *into):
        counts["characters"] += len(text)
        return words(text, *into)

    def counting_entity(self, start, end, depth, default_type, top=False):
        counts["entities"] += 1
        counts["depth"] = max(counts["depth"], depth)
        return entity(self, start, end, depth, default_type, top)

    monkeypatch.setattr(email_module, "_words", counting_words)
    monkeypatch.setattr(email_module._Reader, "entity", counting_entity)
    return counts


def test_five_megabyte_body(work):
    body = " ".join(f"w{i}" for i in range(700_000)) + " lastword"  # 5.3 MB
    tokens = tokenize_email(message("Subject: big", body=body).encode())
    # Only the first MiB is read and at most _MAX_TEXT characters of it tokenised: each
    # distinct word takes at least 3 of them (2 characters and a separator).
    assert work["characters"] <= email_module._MAX_TEXT + 100
    assert len(tokens) <= email_module._MAX_TEXT // 3 + 100
    assert "w0" in tokens and "lastword" not in tokens


def nested(depth: int) -> str:
    """A multipart nested `depth` levels deep, each level with a text part ``levelN``."""
    opening = "".join(
        f'Content-Type: multipart/mixed; boundary="b{i}"\n\n--b{i}\n'
        f"Content-Type: text/plain\n\nlevel{i}\n--b{i}\n"
        for i in range(depth)
    )
    closing = "".join(f"\n--b{i}--\n" for i in reversed(range(depth)))
    return "Subject: deep\n" + opening + "Content-Type: text/plain\n\nbottom\n" + closing


def test_thousand_levels_of_nesting(work):
    tokens = tokenize_email(nested(1000))
    assert work["depth"] <= email_module._MAX_DEPTH
    assert work["entities"] <= 2 * email_module._MAX_DEPTH + 1
    assert {"level0", f"level{email_module._MAX_DEPTH - 1}"} <= tokens
    assert f"level{email_module._MAX_DEPTH + 1}" not in tokens and "bottom" not in tokens


def test_shallow_nesting_is_read_to_the_bottom():
    assert {"level0", "level4", "bottom"} <= tokenize_email(nested(5))


def test_many_parts_are_capped(work):
    raw = multipart(*[f"Content-Type: text/plain\n\npart{i}" for i in range(50_000)])
    tokens = tokenize_email(raw)
    assert work["entities"] <= email_module._MAX_PARTS
    assert "part0" in tokens and "part49999" not in tokens


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(message("Subject: " + "a" * MB), id="huge subject word"),
        pytest.param(message("Subject: " + "=?" * (MB // 2)), id="encoded-word openers"),
        pytest.param(message("From: " + "<" * MB), id="from full of <"),
        pytest.param(message("From: " + "a" * MB), id="from without @"),
        pytest.param(message("To: " + "@a" * (MB // 2)), id="to full of @"),
        pytest.param(message("Received: from " + "a" * MB), id="received without dots"),
        pytest.param(message("Received: from " + "a." * (MB // 2)), id="received all dots"),
        pytest.param(message(*[f"X-H{i}: v" for i in range(100_000)]), id="100k header lines"),
        pytest.param(message("Content-Type: text/plain; charset=" + "x" * MB), id="charset"),
        pytest.param(message(body="http://" + "a" * MB), id="url without dots"),
        pytest.param(message(body="http://a:" * (MB // 9)), id="url userinfo"),
        pytest.param(message(body="www." * (MB // 4)), id="www chain"),
        pytest.param(message(body="http://" + "a." * (MB // 2) + "com"), id="long host"),
        pytest.param(message("From: a@" + "b." * (MB // 2) + "com"), id="long from domain"),
        pytest.param(message(body="@" + "a" * MB), id="address without dots"),
        pytest.param(message(body="\x00" * MB), id="NUL bytes"),
        *[
            pytest.param(message("Content-Type: text/html", body=html), id=name)
            for name, html in [
                ("html <", "<" * MB),
                ("html <a", "<a " * (MB // 3)),
                ("html <a href", "<a href" * (MB // 7)),
                ("html comment openers", "<!--" * (MB // 4)),
                ("html comment then openers", "<!-- x -->" + "<!--" * (MB // 4)),
                ("html script openers", "<script>" * (MB // 8)),
                ("html entities", "&#" * (MB // 2)),
                ("html block tags", "<p" * (MB // 2)),
            ]
        ],
        pytest.param(
            message('Content-Type: multipart/mixed; boundary="b"', body="--bx\n" * (MB // 5)),
            id="boundary look-alikes",
        ),
        pytest.param(
            message('Content-Type: multipart/mixed; boundary="b"', body="--b" * (MB // 3)),
            id="boundary without newlines",
        ),
        pytest.param(
            message("Content-Transfer-Encoding: base64", body="!" * MB), id="base64 garbage"
        ),
        pytest.param(
            message("Content-Transfer-Encoding: quoted-printable", body="=" * MB),
            id="quoted-printable equals signs",
        ),
        pytest.param(
            message("Content-Transfer-Encoding: x-uuencode", body="begin 644 a\n" + "M" * MB),
            id="uuencode garbage",
        ),
    ],
)
def test_hostile_megabyte_inputs(raw, work):
    for form in (raw, raw.encode("utf-8")):
        tokens = tokenize_email(form)
        assert isinstance(tokens, frozenset)
        assert work["characters"] <= 2 * (email_module._MAX_TEXT + email_module._MAX_HEADER)
        assert len(tokens) <= email_module._MAX_TEXT // 3 + 1000
        assert sum(map(len, tokens)) <= 4 * (email_module._MAX_TEXT + email_module._MAX_HEADER)
        work["characters"] = 0


@pytest.mark.parametrize(
    ("headers", "body"),
    [
        (("Content-Type: text/plain; charset=idna",), "caf\xe9 words"),
        (("Content-Type: text/plain; charset=utf-16",), "\xff\xfe\x00odd"),
        (("Content-Type: text/plain; charset=utf\x00-8",), "nul charset"),
        (("Content-Type: text/plain; charset=rot13",), "not a text codec"),
        (("Content-Type: text/plain; charset=x" * 100,), "long name"),
        (("Content-Transfer-Encoding: base64",), "QUJD\x00REVG=\n===\nR0g"),
        (("Content-Transfer-Encoding: quoted-printable",), "caf=E9=\n=ZZ=0"),
        (("Subject: \x00=?utf-8?q?\x00?= \xff\xfe",), "\x00body\x00words"),
        (("Content-Type: text/html; charset=\"\"",), "<p\x00>x&#0;&#x110000;&#xffffffff;</p>"),
    ],
)
def test_invalid_encodings_and_nul_bytes(headers, body):
    raw = message(*headers, body=body)
    for form in (raw, raw.encode("latin-1")):
        tokens = tokenize_email(form)
        assert isinstance(tokens, frozenset)
        assert all(isinstance(token, str) for token in tokens)


_MIME_LEAVES = st.sampled_from(
    [
        "Content-Type: text/plain\n\nplain words",
        "Content-Type: text/html\n\n<p>html <b>words</b><!-- c --></p>",
        "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n"
        + base64.b64encode("é words".encode()).decode(),
        "Content-Type: text/plain\nContent-Transfer-Encoding: quoted-printable\n\nq=3Dp=\n",
        "Content-Type: image/gif; name=a.gif\n\nR0lGOD",
        "Content-Type: message/rfc822\n\nSubject: x\n\nforwarded",
        "garbage without headers",
        "",
    ]
)


@st.composite
def mime_trees(draw, depth=0):
    """Random MIME trees, some of them broken (missing closing boundaries, cut-off parts)."""
    if depth >= 4 or draw(st.booleans()):
        return draw(_MIME_LEAVES)
    boundary = draw(st.sampled_from(["b", "b1", "=_x", "b"]))  # nested reuse of "b" too
    parts = draw(st.lists(mime_trees(depth=depth + 1), max_size=4))
    body = "".join(f"--{boundary}\n{part}\n" for part in parts)
    if draw(st.booleans()):
        body += f"--{boundary}--\n"
    cut = draw(st.integers(0, len(body)))
    if draw(st.booleans()):
        body = body[:cut]
    return f'Content-Type: multipart/{draw(st.sampled_from(["mixed", "alternative", "digest"]))}'\
        f'; boundary="{boundary}"\n\n{body}'


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mime_trees(), st.text(max_size=20), st.booleans())
def test_never_raises_on_random_mime_trees(tree, noise, as_bytes):
    raw = "Subject: s\n" + tree + noise
    tokens = tokenize_email(raw.encode("utf-8", "surrogatepass") if as_bytes else raw)
    assert isinstance(tokens, frozenset)
    assert all(isinstance(token, str) and token for token in tokens)


# --- SMS ----------------------------------------------------------------------------------


def test_sms_numbers_become_shapes():
    tokens = tokenize_sms("Call 09061701461 or text WIN to 87121, 2 go")
    assert {"num:11digits", "num:5digits", "num:1digits", "call", "text", "win"} <= tokens
    assert not any(token.isdigit() for token in tokens)


def test_sms_currency_exclamations_and_links():
    tokens = tokenize_sms("£1000 or $5!! now!!!! see http://x.example.com & getzed.co.uk")
    assert {"currency:£", "currency:$", "excl:2", "excl:3+"} <= tokens
    assert {"url:x.example.com", "url:example.com", "url:getzed.co.uk"} <= tokens
    assert "url:co.uk" not in tokens


@pytest.mark.parametrize(
    ("text", "flag"),
    [
        ("see you soon", "caps:none"),
        ("see you at the pub on FRIDAY ok", "caps:low"),
        ("URGENT call now please", "caps:mid"),
        ("URGENT CALL NOW ok", "caps:high"),
    ],
)
def test_sms_capitals_flag(text, flag):
    assert flag in tokenize_sms(text)


@pytest.mark.parametrize(
    ("length", "flag"),
    [(0, "len:0-39"), (39, "len:0-39"), (40, "len:40-79"), (159, "len:120-159"), (160, "len:160+")],
)
def test_sms_length_flag(length, flag):
    tokens = tokenize_sms("a" * length)
    assert flag in tokens
    assert len([token for token in tokens if token.startswith("len:")]) == 1


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_sms_never_raises(text):
    tokens = tokenize_sms(text)
    assert any(token.startswith("len:") for token in tokens)


# --- Transformers -------------------------------------------------------------------------

SPAM = message("Subject: Cheap meds", body="Buy cheap meds now at http://pills.example.biz !")
HAM = message("Subject: Minutes", body="The minutes of Tuesday's meeting are attached.")


@pytest.mark.parametrize(
    ("transformer", "tokenize"), [(EmailTokens, tokenize_email), (SMSTokens, tokenize_sms)]
)
def test_transform_one_is_the_token_set(transformer, tokenize):
    assert transformer().transform_one(SPAM) == dict.fromkeys(tokenize(SPAM), True)
    assert transformer(on="text").transform_one({"text": SPAM}) == dict.fromkeys(
        tokenize(SPAM), True
    )


def test_transform_one_order_is_sorted():
    assert list(EmailTokens().transform_one(SPAM)) == sorted(tokenize_email(SPAM))


@pytest.mark.parametrize("transformer", [EmailTokens, SMSTokens])
def test_text_input_tag_follows_bag_of_words(transformer):
    assert base.tags.TEXT_INPUT in transformer()._tags
    assert base.tags.TEXT_INPUT not in transformer(on="text")._tags


def test_clone_keeps_parameters():
    assert EmailTokens(on="raw").clone().on == "raw"


def test_pipeline_with_bernoulli_nb_on_raw_messages():
    model = EmailTokens() | naive_bayes.BernoulliNB()
    for _ in range(3):
        model.learn_one(SPAM, "spam")
        model.learn_one(HAM, "ham")
    assert (
        model.predict_one(message("Subject: cheap pills", body="meds at pills.example.biz"))
        == "spam"
    )
    assert model.predict_one(message("Subject: meeting", body="minutes attached")) == "ham"


def test_transform_many_series_and_frame():
    series = pd.Series([SPAM, HAM], index=[10, 20])
    frame = EmailTokens().transform_many(series)
    assert list(frame.index) == [10, 20]
    assert set(frame.columns) == tokenize_email(SPAM) | tokenize_email(HAM)
    for position, text in enumerate([SPAM, HAM]):
        row = frame.iloc[position].sparse.to_dense()
        assert set(row[row].index) == tokenize_email(text)
    by_column = EmailTokens(on="raw").transform_many(pd.DataFrame({"raw": series}))
    pd.testing.assert_frame_equal(by_column, frame)


def test_pipeline_learn_many():
    model = SMSTokens() | naive_bayes.BernoulliNB()
    X = pd.Series(["WIN £100 now!!! call 09061701461", "see u at 7", "FREE prize txt 87121"])
    # Strings: river's BernoulliNB.learn_many turns labels into strings anyway.
    model.learn_many(X, pd.Series(["spam", "ham", "spam"]))
    assert list(model.predict_many(pd.Series(["claim FREE £500 prize call 09061701234"]))) == [
        "spam"
    ]


@pytest.mark.parametrize("transformer", [EmailTokens(), SMSTokens()])
def test_river_estimator_checks(transformer):
    # With `on`, river's checks feed numeric dicts without the text key, which no text
    # transformer (BagOfWords included) can handle: only the plain-text form is checked.
    checks.check_estimator(transformer)


def _is_email_by_definition(text: str | bytes) -> bool:
    """is_email's rule read off every line of the first 8 KiB (it splits a prefix first)."""
    if isinstance(text, bytes):
        text = text[:8192].decode("latin-1")
    lines = text[:8192].lstrip("\r\n").splitlines()
    if lines and lines[0].startswith("From "):
        lines = lines[1:]
    if not lines or not re.match(r"[!-9;-~]+:", lines[0]) or len(lines) < 2:
        return False
    for line in lines[1:51]:
        if not line.strip() or re.match(r"[!-9;-~]+:", line):
            return True
        if line[0] not in " \t":
            return False
    return True


_HEAD_PIECES = ["From a", "From: a@b.c", "Subject: x", "X-Long: " + "v" * 1000, " folded",
                "\n" * 300, "\r\n" * 130,
                "\tfolded", "plain words", "", " ", "\xa0", "\xa0x", "\r", "\n", "\r\n", "\x0b",
                "\u2028", "a" * 1017, "b" * 1023, "c" * 249, "d" * 255]


@settings(max_examples=400, deadline=None)
# lines cut by the 256- and 1,024-character prefixes: a non-blank line whose prefix is blank,
# a field whose name the cut ends before its colon
@example(text="From: a@b.c\n" + "\xa0" * 1500 + "x", as_bytes=False)
@example(text="From: a@b.c\nX-" + "a" * 1100 + ": v\n", as_bytes=True)
@example(text="From: a@b.c\n" + "\xa0" * 300 + "x", as_bytes=True)
@example(text="From: a@b.c\nX-" + "a" * 250 + ": v\n", as_bytes=False)
@example(text="\r\n" * 200 + "From: a@b.c\nTo: d@e.f\n", as_bytes=True)  # a head of newlines
@example(text="\n" * 9000 + "From: a@b.c\nTo: d@e.f\n", as_bytes=False)
@given(st.lists(st.sampled_from(_HEAD_PIECES), max_size=80).map("\n".join)
       | st.lists(st.sampled_from(_HEAD_PIECES), max_size=80).map("".join), st.booleans())
def test_is_email_is_its_rule_on_every_line(text, as_bytes):
    """Deciding on the lines of a 256-character prefix, then a 1,024-character one (the last,
    maybe cut, line left out) gives what the rule gives on all the lines, wherever a prefix
    cuts."""
    from streamnb.features import is_email

    value = text.encode("latin-1", "replace") if as_bytes else text
    assert is_email(value) == _is_email_by_definition(value)
