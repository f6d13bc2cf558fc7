"""QJ5xx problem codes of intake and filing, in the shared registry shape (schema.codes.Code)."""

from __future__ import annotations

from schema.codes import Code, CodedError
from schema.problem import Problem, problem_in

CODES: tuple[Code, ...] = (
    Code(
        "QJ501",
        "error",
        "no report found in the issue",
        "Paste the whole energy.json into the form's energy.json field, or into a fenced ```json block.",
    ),
    Code(
        "QJ502",
        "error",
        "issue body too long",
        "An issue body holds at most 65,536 characters; submit one report per issue or trim the notes.",
    ),
    Code(
        "QJ503",
        "error",
        "report block too large",
        "A report must be at most 60,000 bytes; rerun `python -m measure run` with fewer trials.",
    ),
    Code(
        "QJ504",
        "error",
        "licence consent missing",
        "Tick the box 'I license this report under CC BY 4.0' (or add the line `- [x] I license this "
        "report under CC BY 4.0`) and edit the issue; the bot rechecks on every edit.",
    ),
    Code(
        "QJ505",
        "error",
        "duplicate report",
        "This exact report is already on file; nothing to do. Submit a new measurement instead.",
    ),
    Code(
        "QJ507",
        "error",
        "too many reports in one issue",
        "At most 20 reports per issue; open another issue for the rest.",
    ),
    Code(
        "QJ508",
        "error",
        "near-duplicate of a report on file",
        "Its trial energies and timings are those of a report already on file (or earlier in this issue); "
        "only the seed, notes, versions or dates differ. Submit a new measurement instead.",
    ),
    Code(
        "QJ509",
        "warning",
        "form field truncated",
        "Keep the credited handle and affiliation under 100 characters and the notes under 2,000.",
    ),
    Code(
        "QJ510",
        "error",
        "GitHub API error, will retry",
        "Nothing is lost: the issue keeps the bot-error label and is processed again on the next run "
        "(or comment /recheck as a maintainer).",
    ),
    Code(
        "QJ511",
        "warning",
        "GPU field disagrees with the report",
        "The GPU named in the form differs from system_under_test.gpu; the report's value is used.",
    ),
    Code(
        "QJ512",
        "warning",
        "unterminated code fence",
        "Close the ```json block with a line of three backticks; the rest of the body was read as the "
        "report.",
    ),
    Code(
        "QJ513",
        "error",
        "event file unreadable",
        "Pass the webhook payload GitHub wrote to $GITHUB_EVENT_PATH (a JSON object with an `issue`).",
    ),
    Code(
        "QJ514",
        "error",
        "plan file unreadable",
        "Pass the plan.json written by `python -m bot plan` in the same workflow run, unchanged.",
    ),
    Code(
        "QJ516",
        "error",
        "GitHub token or repository missing",
        "Set GITHUB_TOKEN and pass --repo OWNER/NAME (Actions sets GITHUB_REPOSITORY).",
    ),
    Code(
        "QJ518",
        "error",
        "an open pull request could not be planned again",
        "The other open replication pull requests were refreshed; comment /recheck on this issue as a "
        "maintainer, and report the message if it persists.",
    ),
    Code(
        "QJ519",
        "error",
        "submitted by a bot account",
        "Replications are credited to a person: open the issue from your own GitHub account.",
    ),
    Code(
        "QJ520",
        "error",
        "submission withdrawn: the issue is closed",
        "Nothing of a closed issue is filed and its pull request is closed; reopen the issue to submit "
        "again.",
    ),
    Code(
        "QJ521",
        "error",
        "rejected by a maintainer",
        "A maintainer closed this submission's pull request without merging it; the bot opens no other. A "
        "maintainer can reopen that pull request to reconsider, and the bot then keeps it up to date.",
    ),
    Code(
        "QJ522",
        "warning",
        "a maintainer pushed to the bot's branch; left as it is",
        "The bot never overwrites commits it did not write. To let it rebuild the branch, delete the branch "
        "(or reset it to the bot's last commit) and comment /recheck.",
    ),
    Code(
        "QJ517",
        "error",
        "demo cannot run",
        "Run the demo from a git checkout of quantjoule, with --out naming an empty or new directory.",
    ),
)


def codes() -> tuple[Code, ...]:
    """The intake and filing codes owned here, in order."""
    return CODES


def problem(code: str, message: str, path: str = "", hint: str | None = None) -> Problem:
    """A Problem for the registered bot code `code` (its severity and hint come from the registry)."""
    return problem_in(CODES, code, message, path, hint)


class BotError(CodedError):
    """Bad input to the bot, carrying its problem (a QJ5xx, or a QJ3xx passed on from curves): the CLI prints
    the code, message and hint, never a traceback."""

    registry = CODES

    def __init__(self, prob: Problem):
        super().__init__(prob.code, prob.message, prob.hint)
        self.problem = prob

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"
