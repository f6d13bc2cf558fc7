"""Untrusted text, two ways: made visible for display (`visible`) and reduced to a skeleton for matching.

`visible` shows every control, zero-width, bidi-override and other invisible character as `U+XXXX`, so
nothing a submitter writes can hide or reorder the text around it (the bot's comments and the gallery both
use it). `skeleton` is what word rules match against: NFKC, case folded, combining marks and invisible
characters dropped, and letters that look like Latin ones (Cyrillic `а`, Greek `ο`, dotless `ı`...) mapped
to them, so `ill\u200bustrative` or `іllustrative` (Cyrillic і) still read `illustrative`.
"""

from __future__ import annotations

import re
import unicodedata

# Control characters (except tab and newline, which callers fold), soft hyphen, Arabic letter mark, Hangul
# fillers, Mongolian vowel separator, zero-width and bidi marks, embeddings, overrides and isolates, word
# joiners and invisible operators, variation selectors, the byte-order mark, interlinear annotations, tags.
INVISIBLE = re.compile(
    "[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u17b4\u17b5\u180e"
    "\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\ufff9-\ufffb\U000e0000-\U000e0fff]"
)
# Letters of other scripts drawn like Latin letters (after NFKC and case folding), from Unicode's
# confusables data (TR39) for the lower-case letters a-z; enough for the words the validator looks for.
CONFUSABLES = {
    "a": "\u0430\u03b1\u0251\u237a",
    "b": "\u0184\u042c\u0432\u13cf",
    "c": "\u0441\u03f2\u217d\u1d04",
    "d": "\u0501\u217e\u13e7",
    "e": "\u0435\u04bd\u212e\u0454",
    "f": "\u0192\u1e9d",
    "g": "\u0261\u0581\u018d",
    "h": "\u04bb\u0570\u13c2",
    "i": "\u0456\u0131\u03b9\u0269\u1fbe\u2139",
    "j": "\u0458\u03f3",
    "k": "\u03ba\u043a",
    "l": "\u04cf\u0399\u217c\u01c0\u05c0\u2223\u0406\u04c0",
    "m": "\u217f\u043c",
    "n": "\u0578\u057c\u043f\u03b7",
    "o": "\u043e\u03bf\u0585\u0ce6\u0d20\u101d\u2134\u03c3",
    "p": "\u0440\u03c1\u2374",
    "q": "\u0566\u051b",
    "r": "\u0433\u1d26\u2c85",
    "s": "\u0455\u01bd\ua731",
    "t": "\u03c4\u0442",
    "u": "\u03c5\u057d\u028b\u1d1c",
    "v": "\u03bd\u0475\u2174\u1d20",
    "w": "\u0461\u051d\u1d21",
    "x": "\u0445\u03c7\u2179",
    "y": "\u0443\u03b3\u04af\u0263",
    "z": "\u1d22\u01b6",
}
_TO_LATIN = str.maketrans({ch: latin for latin, chars in CONFUSABLES.items() for ch in chars})


def visible(text: object) -> str:
    """`text` with invisible and direction-changing characters shown as `U+XXXX` (tabs become spaces);
    unpaired surrogates, private-use and unassigned code points are shown the same way."""
    text = "" if text is None else str(text)
    text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    out = INVISIBLE.sub(lambda m: f"U+{ord(m.group()):04X}", text.replace("\t", " "))
    return "".join(
        ch if unicodedata.category(ch) not in ("Cs", "Co", "Cn") else f"U+{ord(ch):04X}" for ch in out
    )


def skeleton(text: object) -> str:
    """The text word rules match: NFKC, case folded, no combining marks, no invisible or format
    characters, look-alike letters mapped to Latin ones, runs of space collapsed."""
    text = " ".join(unicodedata.normalize("NFKC", "" if text is None else str(text)).split())
    text = unicodedata.normalize("NFKD", text.casefold())
    kept = "".join(ch for ch in text if unicodedata.category(ch) not in ("Mn", "Me", "Cf", "Cc", "Cs"))
    kept = unicodedata.normalize("NFKC", INVISIBLE.sub("", kept)).translate(_TO_LATIN)
    return " ".join(kept.split())
