"""A question's verb read in its other forms, so "What did Max get for Christmas?" finds "Max
got a microscope".

Questions ask with the verb's base form ("what did she buy", "where did they go", "who did
he tell"), and what was said keeps the past ("bought", "went", "told"). The search index's
stemmer (Porter, in FTS5) joins "played" to "play", never "bought" to "buy": an irregular
verb's forms are different words to it, so the one word that tells a memory apart counted
for nothing. Each question word that is a form of a common irregular English verb is
therefore looked up as all of its forms, and a memory holding any of them holds the word.
The table is the verbs people use in everyday speech, not a dictionary: a word not in it is
searched as before, and so is every word of another language.

Measured on bench/recall_quality.py, MRR over every answerable question, before → after (A /
B): conversational 0.881 → 0.890 (0.915 → 0.915 / 0.843 → 0.861: "Which book did I choose
for book club?" found "Sam chose …" first, third before), longchat 0.835 → 0.836 (a
question's target from 13th to 9th), bakery 0.915 and the padded bakery 0.743 unchanged,
bench/lang_quality.py unchanged. With "say" in the table the conversational A half fell to
0.903 (a question lost "say" to the focus).

An ordinal number is read as its cardinal the same way ("When is Carla's fortieth birthday?"
finds "Carla turns forty on 30 August", which the party's recap, the one memory saying
"fortieth", outranked): longchat 0.862 → 0.867 (A 0.874 → 0.883, B unchanged), every other set
unchanged. "First", "second" and "third" are left out: they are words of their own ("her first
gig", "a second opinion").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

_VERBS = """
arise arose arisen|awake awoke awoken|be was were been|beat beaten|become became|
begin began begun|bend bent|bet|bleed bled|blow blew blown|break broke broken|
breed bred|bring brought|build built|burn burnt|buy bought|catch caught|choose chose chosen|
come came|cost|creep crept|cut|deal dealt|dig dug|do did done|draw drew drawn|dream dreamt|
drink drank drunk|drive drove driven|eat ate eaten|feed fed|feel felt|fight fought|
find found|flee fled|fly flew flown|forbid forbade forbidden|forget forgot forgotten|forgive forgave forgiven|
freeze froze frozen|get got gotten|give gave given|go went gone|grow grew grown|hang hung|
have has had|hear heard|hide hid hidden|hit|hold held|hurt|keep kept|kneel knelt|know knew known|
lean leant|leap leapt|learn learnt|lend lent|let|
lose lost|make made|mean meant|meet met|pay paid|prove proven|put|quit|read|ride rode ridden|ring rang rung|
run ran|see saw seen|seek sought|sell sold|send sent|set|sew sewn|shake shook shaken|
shine shone|shoot shot|show shown|shrink shrank shrunk|shut|sing sang sung|sink sank sunk|sit sat|
sleep slept|slide slid|speak spoke spoken|spend spent|spin spun|split|spread|
stand stood|steal stole stolen|stick stuck|sting stung|stink stank|strike struck|swear swore sworn|
sweep swept|swim swam swum|swing swung|take took taken|teach taught|tell told|
think thought|throw threw thrown|understand understood|wake woke woken|wear wore worn|weave wove woven|
weep wept|win won|withdraw withdrew withdrawn|write wrote written
"""
_ORDINALS = """
four fourth|five fifth|six sixth|seven seventh|eight eighth|nine ninth|ten tenth|eleven eleventh|
twelve twelfth|thirteen thirteenth|fifteen fifteenth|twenty twentieth|thirty thirtieth|forty fortieth|
fifty fiftieth|sixty sixtieth|seventy seventieth|eighty eightieth|ninety ninetieth|hundred hundredth
"""  # "Carla's fortieth" is "Carla turns forty"; first, second and third are words of their own
_SKIP = frozenset({"be", "was", "were", "been", "do", "did", "done", "have", "has", "had"})  # in every memory
# Left out: verbs whose forms are everyday words of their own ("fall"/"fell", "rose", "bit",
# "ground", "left", "lead", "light", "bound", "wound", "spring", "tear", "lay", "bear"), and
# "say": a chat store's memories each say who said them, so "said" would make "say" a word
# every memory holds, and the question would lose it (kura.recall.focus) for nothing.


def _table() -> dict[str, tuple[str, ...]]:
    table: dict[str, tuple[str, ...]] = {}
    for verb in (_VERBS + "|" + _ORDINALS).split("|"):
        every = tuple(verb.split())
        for form in every:
            if form not in _SKIP:
                table[form] = tuple(other for other in every if other != form and other not in _SKIP)
    return table


FORMS = _table()


def others(word: str) -> tuple[str, ...]:
    """The other forms of ``word`` (lower case) when it is a form of a common irregular verb."""
    return FORMS.get(word, ())


def rows(lookup: Callable[[list[str]], list[np.ndarray]], words: Sequence[str]) -> list[np.ndarray]:
    """Per question word, the rows of the memories holding it in any of its forms: ``lookup``
    (``SearchIndex.word_rows``) asked once for every word and form."""
    import numpy as np

    extra = [form for word in words for form in others(word) if form not in words]
    found = lookup([*words, *dict.fromkeys(extra)])
    at = dict(zip([*words, *dict.fromkeys(extra)], found, strict=True))
    out = []
    for word in words:
        held = [at[word], *(at[form] for form in others(word) if form in at)]
        out.append(held[0] if len(held) == 1 else np.unique(np.concatenate(held)))
    return out
