"""A Sic Bo layout as the players see it, as SVG: the areas of the table file's
edition in their places on the cloth, labelled with their odds, the winning
areas of a round lit, the dice, the round id, the time, and the void or the
correction if any.

The winning areas come from the firmware's own settlement
(`sicbo.settle.SettlementTable.winning_areas`): this module only draws.

Every area is one `<g class="area ..." data-area="CODE" data-lit="0|1"
data-offered="0|1">`, so that tools and tests can read the picture back
(tests/host/test_svg.py). Areas of the edition that the table file does not
offer are drawn dimmed, marked "not offered", and never lit.

Layout (2004, top to bottom, as on a Macau cloth): ODD, SMALL, the doubles
1-3, the specific triples around ANY TRIPLE, the doubles 4-6, BIG, EVEN;
the totals 4..17; the fifteen two-dice combinations; the 2004 combinations
(a double and a single, three numbers, four numbers); the singles 1..6 with
their dice faces nearest the players. The 2003 layout has SMALL, the triples,
BIG, the totals and the singles.
"""

from xml.sax.saxutils import escape

from sicbo import areas, kinds

WIDTH = 1400
MARGIN = 20
GAP = 6

FELT = "#0b5d36"
FELT_EDGE = "#083f25"
LINE = "#e6d28a"
CELL = "#0e6b3f"
TEXT = "#fbf6e3"
LIT = "#ffd23f"
LIT_EDGE = "#fff6c2"
LIT_TEXT = "#3a2300"
CLOSED = "#1d3b2b"
PIP_RED = "#c8102e"
PIP = "#1a1a1a"
SERIF = "Georgia, 'DejaVu Serif', 'Times New Roman', serif"
SANS = "'DejaVu Sans', 'Liberation Sans', Arial, sans-serif"

# Pip positions on a unit die, by face.
_PIPS = {
    1: ((0.5, 0.5),),
    2: ((0.27, 0.27), (0.73, 0.73)),
    3: ((0.27, 0.27), (0.5, 0.5), (0.73, 0.73)),
    4: ((0.27, 0.27), (0.73, 0.27), (0.27, 0.73), (0.73, 0.73)),
    5: ((0.27, 0.27), (0.73, 0.27), (0.5, 0.5), (0.27, 0.73), (0.73, 0.73)),
    6: ((0.27, 0.25), (0.73, 0.25), (0.27, 0.5), (0.73, 0.5), (0.27, 0.75), (0.73, 0.75)),
}


def fit(text, size, width):
    """A font size at most size at which text fits in width (bold sans)."""
    return min(size, (width - 8) / (0.62 * max(len(text), 1)))


def _f(x):
    return ("%.1f" % x).rstrip("0").rstrip(".")


class Svg:
    def __init__(self):
        self.parts = []

    def add(self, s):
        self.parts.append(s)

    def rect(self, x, y, w, h, fill, stroke="none", sw=0.0, rx=0.0, extra=""):
        self.add('<rect x="%s" y="%s" width="%s" height="%s" rx="%s" fill="%s" stroke="%s" '
                 'stroke-width="%s"%s/>' % (_f(x), _f(y), _f(w), _f(h), _f(rx), fill, stroke,
                                            _f(sw), extra))

    def text(self, x, y, s, size, fill=TEXT, weight="normal", anchor="middle", family=SERIF,
             extra=""):
        self.add('<text x="%s" y="%s" font-size="%s" font-family="%s" font-weight="%s" '
                 'text-anchor="%s" fill="%s"%s>%s</text>'
                 % (_f(x), _f(y), _f(size), family, weight, anchor, fill, extra, escape(s)))

    def die(self, x, y, size, face, shade=False):
        """A die showing face (0 or None: a blank die with a question mark)."""
        self.rect(x, y, size, size, "#fffdf6" if not shade else "#e9e4d3", "#7a7260",
                  max(size / 30, 0.6), size * 0.18)
        if not face or face not in _PIPS:
            self.text(x + size / 2, y + size * 0.68, "?", size * 0.55, PIP, "bold",
                      family=SANS)
            return
        colour = PIP_RED if face in (1, 4) else PIP
        r = size * (0.12 if face == 1 else 0.085)
        for px, py in _PIPS[face]:
            self.add('<circle cx="%s" cy="%s" r="%s" fill="%s"/>'
                     % (_f(x + px * size), _f(y + py * size), _f(r), colour))

    def dice_row(self, cx, y, size, faces, gap=None):
        gap = size * 0.18 if gap is None else gap
        w = len(faces) * size + (len(faces) - 1) * gap
        x = cx - w / 2
        for face in faces:
            self.die(x, y, size, face)
            x += size + gap

    def done(self, height):
        head = ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
                'viewBox="0 0 %d %d" font-family="%s">' % (WIDTH, height, WIDTH, height, SERIF))
        return "\n".join([head] + self.parts + ["</svg>", ""])


class Layout:
    """Draws the cloth of one table configuration with a set of lit areas."""

    def __init__(self, cfg, lit, dice=()):
        self.cfg = cfg
        self.lit = set(lit)
        self.dice = tuple(dice or ())
        self.svg = Svg()
        self.edition = cfg.edition
        self.kills = {areas.code(i) for i in cfg.triple_kills}
        self.drawn = []

    def odds(self, code):
        return self.cfg.odds[areas.index_of(code)]

    def odds_at(self, x, y, w, code, size, colour):
        """The odds line of an area, centred in a cell at x of width w."""
        text = self.pays(code)
        self.svg.text(x + w / 2, y, text, fit(text, size, w), colour, "bold", family=SANS)

    def pays(self, code, times=1):
        """The odds line of an area ("not offered" when the table has it not)."""
        o = self.odds(code)
        return "%d to 1" % (o * times) if o else "not offered"

    def offered(self, code):
        i = areas.index_of(code)
        return i >= 0 and self.cfg.is_offered(i)

    def cell(self, code, x, y, w, h, draw, rx=6.0):
        """One area: a group with its box, then draw(x, y, w, h, colour) for
        its contents."""
        s = self.svg
        offered = self.offered(code)
        lit = offered and code in self.lit
        self.drawn.append(code)
        cls = "area lit" if lit else "area live" if offered else "area closed"
        s.add('<g class="%s" id="area-%s" data-area="%s" data-lit="%d" data-offered="%d">'
              % (cls, code, code, lit, offered))
        s.add("<title>%s%s</title>" % (code, "" if offered else " (not offered)"))
        if lit:
            s.rect(x - 3, y - 3, w + 6, h + 6, LIT, rx=rx + 3,
                   extra=' opacity="0.45" filter="url(#glow)"')
            s.rect(x, y, w, h, LIT, LIT_EDGE, 2.5, rx)
        elif offered:
            s.rect(x, y, w, h, CELL, LINE, 1.6, rx)
        else:
            s.rect(x, y, w, h, CLOSED, "#52705f", 1.2, rx,
                   extra=' stroke-dasharray="5 4" opacity="0.8"')
        colour = LIT_TEXT if lit else TEXT if offered else "#7f9a8a"
        s.add('<g opacity="%s">' % ("1" if offered else "0.45"))
        draw(x, y, w, h, colour)
        s.add("</g>")
        s.add("</g>")

    # ---- the rows -----------------------------------------------------------------

    def label(self, y, text):
        self.svg.text(MARGIN + 18, y, text, 12.5, LINE, "bold", "start", SANS,
                      ' letter-spacing="1.5"')

    def top_row(self, y, h):
        """ODD, SMALL, doubles 1-3, triples, doubles 4-6, BIG, EVEN."""
        s = self.svg
        inner = WIDTH - 2 * MARGIN - 36
        x0 = MARGIN + 18
        if self.edition == kinds.EDITION_2004:
            widths = (100, 190, 85, 85, 85, 330, 85, 85, 85, 190, 100)
        else:
            widths = (0, 330, 0, 0, 0, 530, 0, 0, 0, 330, 0)
        n = sum(1 for w in widths if w)
        scale = (inner - (n - 1) * GAP) / sum(widths)
        xs = []
        x = x0
        for w in widths:
            xs.append((x, w * scale))
            if w:
                x += w * scale + GAP
        if self.edition == kinds.EDITION_2004:
            self.cell("ODD", xs[0][0], y, xs[0][1], h, self._parity("ODD"))
            self.cell("EVEN", xs[10][0], y, xs[10][1], h, self._parity("EVEN"))
            for k, col in enumerate((2, 3, 4, 6, 7, 8)):
                n_ = k + 1
                self.cell("DOUBLE_%d" % n_, xs[col][0], y, xs[col][1], h, self._double(n_))
        self.cell("SMALL", xs[1][0], y, xs[1][1], h, self._small_big("SMALL", "4 - 10"))
        self.cell("BIG", xs[9][0], y, xs[9][1], h, self._small_big("BIG", "11 - 17"))
        tx, tw = xs[5]
        th = (h - 2 * GAP) / 3
        cw = (tw - 2 * GAP) / 3
        for k in range(3):
            self.cell("TRIPLE_%d" % (k + 1), tx + k * (cw + GAP), y, cw, th,
                      self._triple(k + 1))
            self.cell("TRIPLE_%d" % (k + 4), tx + k * (cw + GAP), y + 2 * (th + GAP), cw, th,
                      self._triple(k + 4))
        self.cell("ANY_TRIPLE", tx, y + th + GAP, tw, th, self._any_triple)
        s.add("")

    def _small_big(self, code, span):
        def draw(x, y, w, h, c):
            s = self.svg
            s.text(x + w / 2, y + h * 0.36, code, min(44, w / 4), c, "bold")
            s.text(x + w / 2, y + h * 0.54, span, 20, c, family=SANS)
            self.odds_at(x, y + h * 0.70, w, code, 17, c)
            if code in self.kills:
                s.text(x + w / 2, y + h * 0.86, "loses if any triple appears", min(12, w / 15),
                       c, family=SANS, extra=' font-style="italic"')
        return draw

    def _parity(self, code):
        def draw(x, y, w, h, c):
            s = self.svg
            s.text(x + w / 2, y + h * 0.40, code, min(26, w / 3.6), c, "bold")
            self.odds_at(x, y + h * 0.58, w, code, 14, c)
            if code in self.kills:
                s.text(x + w / 2, y + h * 0.76, "loses on", 10.5, c, family=SANS)
                s.text(x + w / 2, y + h * 0.76 + 13, "any triple", 10.5, c, family=SANS)
        return draw

    def _double(self, n):
        def draw(x, y, w, h, c):
            s = self.svg
            size = min(w * 0.52, 40)
            s.die(x + (w - size) / 2, y + h * 0.12, size, n)
            s.die(x + (w - size) / 2, y + h * 0.12 + size * 1.15, size, n)
            self.odds_at(x, y + h * 0.82, w, "DOUBLE_%d" % n, 14, c)
        return draw

    def _triple(self, n):
        def draw(x, y, w, h, c):
            s = self.svg
            size = min(h * 0.5, 24)
            s.dice_row(x + w / 2, y + h * 0.12, size, (n, n, n))
            self.odds_at(x, y + h * 0.88, w, "TRIPLE_%d" % n, 13, c)
        return draw

    def _any_triple(self, x, y, w, h, c):
        s = self.svg
        s.text(x + w / 2, y + h * 0.34, "ANY TRIPLE", 17, c, "bold")
        size = 15
        step = (w - 24) / 6
        for k in range(6):
            s.dice_row(x + 12 + step * (k + 0.5), y + h * 0.42, size, (k + 1,) * 3, 1.5)
        self.odds_at(x, y + h * 0.92, w, "ANY_TRIPLE", 13, c)

    def strip(self, y, h, codes, draw_of, rows=1):
        """Equal cells across the cloth, in rows."""
        per = (len(codes) + rows - 1) // rows
        inner = WIDTH - 2 * MARGIN - 36
        w = (inner - (per - 1) * GAP) / per
        ch = (h - (rows - 1) * GAP) / rows
        for k, code in enumerate(codes):
            r, col = divmod(k, per)
            self.cell(code, MARGIN + 18 + col * (w + GAP), y + r * (ch + GAP), w, ch,
                      draw_of(code))

    def _total(self, code):
        t = int(code.split("_")[1])

        def draw(x, y, w, h, c):
            s = self.svg
            s.text(x + w / 2, y + h * 0.52, str(t), min(40, h * 0.45), c, "bold")
            self.odds_at(x, y + h * 0.82, w, code, 14, c)
        return draw

    def _faces(self, code, faces):
        def draw(x, y, w, h, c):
            s = self.svg
            n = len(faces)
            size = min(h * 0.5, (w - 10) / (n * 1.18), 30)
            s.dice_row(x + w / 2, y + h * 0.1, size, faces)
            self.odds_at(x, y + h * 0.87, w, code, 13, c)
        return draw

    def _single(self, n):
        code = "SINGLE_%d" % n

        def draw(x, y, w, h, c):
            s = self.svg
            size = min(h * 0.5, 56)
            s.die(x + 14, y + (h - size) / 2, size, n)
            o = self.odds(code)
            tx = x + 14 + size + (w - 14 - size) / 2
            s.text(tx, y + h * 0.30, "%d" % n, 26, c, "bold")
            shown = self.dice.count(n) if code in self.lit else 0
            if not o:
                s.text(tx, y + h * 0.62, "not offered", 12.5, c, family=SANS)
                return
            for k, words in enumerate(("one die", "two dice", "three dice")):
                ly = y + h * (0.50 + 0.16 * k)
                if shown == k + 1:
                    # The line this result pays, marked as a dealer would point at it.
                    s.rect(tx - 64, ly - 13, 128, 18, "#3a2300", rx=9, extra=' opacity="0.9"')
                    s.text(tx, ly, "%s %d to 1" % (words, (k + 1) * o), 12.5, LIT, "bold",
                           family=SANS)
                else:
                    s.text(tx, ly, "%s %d to 1" % (words, (k + 1) * o), 12.5, c, family=SANS)
        return draw

    def draw(self, y):
        """The cloth from y down; returns the y after it."""
        s = self.svg
        top = y
        y += 16
        self.top_row(y, 190)
        y += 190 + 10
        self.label(y + 12, "TOTAL OF THE THREE DICE")
        y += 18
        self.strip(y, 92, ["TOTAL_%d" % t for t in range(4, 18)], self._total)
        y += 92 + 10
        if self.edition == kinds.EDITION_2004:
            self.label(y + 12, "TWO DICE COMBINATIONS: BOTH NUMBERS SHOW")
            y += 18
            pairs = [(a, b) for a in range(1, 7) for b in range(a + 1, 7)]
            self.strip(y, 84, ["PAIR_%d_%d" % p for p in pairs],
                       lambda code: self._faces(code, _numbers(code)))
            y += 84 + 10
            self.label(y + 12, "A DOUBLE AND A SINGLE")
            y += 18
            combos = [areas.code(i) for i in range(kinds.AREA_COUNT_2004)
                      if areas.kind_of(i) == kinds.COMBO_DOUBLE]
            combos.sort(key=_combo_key)
            self.strip(y, 2 * 66 + GAP, combos, lambda code: self._faces(code, _combo(code)),
                       rows=2)
            y += 2 * 66 + GAP + 10
            self.label(y + 12, "THREE NUMBERS")
            y += 18
            threes = [areas.code(i) for i in range(kinds.AREA_COUNT_2004)
                      if areas.kind_of(i) == kinds.COMBO_THREE]
            self.strip(y, 66, threes, lambda code: self._faces(code, _numbers(code)))
            y += 66 + 10
            self.label(y + 12, "FOUR NUMBERS: THREE DIFFERENT DICE AMONG THEM")
            y += 18
            fours = [areas.code(i) for i in range(kinds.AREA_COUNT_2004)
                     if areas.kind_of(i) == kinds.FOUR]
            self.strip(y, 66, fours, lambda code: self._faces(code, _numbers(code)))
            y += 66 + 10
        self.label(y + 12, "SINGLE NUMBERS")
        y += 18
        self.strip(y, 118, ["SINGLE_%d" % n for n in range(1, 7)],
                   lambda code: self._single(int(code[-1])))
        y += 118 + 16
        # The felt under everything drawn so far.
        s.parts.insert(self._felt_at, '<rect x="%d" y="%d" width="%d" height="%d" rx="28" '
                       'fill="url(#felt)" stroke="%s" stroke-width="6"/>'
                       % (MARGIN, top, WIDTH - 2 * MARGIN, y - top, FELT_EDGE))
        return y

    _felt_at = 0


def _numbers(code):
    return tuple(int(x) for x in code.split("_")[1:])


def _combo(code):
    # COMBO_1_1_2: the double first, as the cloth shows it (1 1 | 2).
    a, b, c = _numbers(code)
    return (a, a, c) if a == b else (c, c, a)


def _combo_key(code):
    d = _combo(code)
    return (d[0], d[2])


_DEFS = """<defs>
<radialGradient id="felt" cx="50%" cy="45%" r="75%">
<stop offset="0%" stop-color="#11804b"/><stop offset="100%" stop-color="{felt}"/>
</radialGradient>
<linearGradient id="wood" x1="0" y1="0" x2="0" y2="1">
<stop offset="0%" stop-color="#3b2414"/><stop offset="100%" stop-color="#1f130a"/>
</linearGradient>
<filter id="glow" x="-20%" y="-20%" width="140%" height="140%">
<feGaussianBlur stdDeviation="4"/>
</filter>
</defs>""".replace("{felt}", FELT)


def render(cfg, table, dice=None, lit_dice=True, title=None, round_id=None, when=None,
           status=None, notes=(), old_dice=None):
    """The SVG text of the table's layout. dice: the effective result (or None);
    lit_dice False draws the dice but lights nothing (a void round). notes:
    lines shown under the header (void reason, correction, damage)."""
    lit = []
    if dice is not None and lit_dice:
        lit = [areas.code(a) for a, _odds in table.winning_areas(*dice)]
    lay = Layout(cfg, lit, dice if lit_dice else ())
    s = lay.svg
    s.add('<rect width="100%" height="100%" fill="#101010"/>')
    s.add(_DEFS)
    # Header: the table, the dice, the round and the time.
    hh = 128 + 22 * len(notes)
    s.rect(MARGIN, 12, WIDTH - 2 * MARGIN, hh, "url(#wood)", "#5b3d22", 2, 16)
    s.text(MARGIN + 24, 52, "SIC BO", 34, LINE, "bold", "start",
           extra=' letter-spacing="6"')
    name = title or cfg.name
    if len(name) > 58:
        name = name[:57] + "\u2026"  # the dice are drawn from the middle
    s.text(MARGIN + 24, 80, name, 15, TEXT, anchor="start", family=SANS)
    s.text(MARGIN + 24, 102, "%d edition layout, %d areas offered"
           % (cfg.edition, len(cfg.offered)), 13, "#cbbf98", anchor="start", family=SANS)
    size = 64
    cx = WIDTH / 2
    s.add('<g id="dice" data-dice="%s">' % ("-".join(str(d) for d in dice) if dice else ""))
    s.dice_row(cx, 28, size, dice if dice else (0, 0, 0), 14)
    s.add("</g>")
    if dice:
        total = sum(dice)
        s.text(cx, 28 + size + 24, "total %d" % total, 16, TEXT, family=SANS)
    if old_dice:
        x = cx + 1.5 * size + 40
        s.text(x, 46, "corrected from", 12, "#ffb4a8", anchor="start", family=SANS)
        for k, face in enumerate(old_dice):
            s.die(x + k * 28, 54, 24, face, shade=True)
        s.add('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#ff5a4a" stroke-width="3"/>'
              % (_f(x - 4), _f(80), _f(x + 3 * 28), _f(52)))
    right = WIDTH - MARGIN - 24
    s.text(right, 52, "ROUND %s" % (round_id if round_id is not None else "-"), 28, LINE,
           "bold", "end")
    if when:
        s.text(right, 80, when, 14, TEXT, anchor="end", family=SANS)
    if status:
        s.text(right, 102, status, 14, "#cbbf98", anchor="end", family=SANS)
    for k, line in enumerate(notes):
        colour, text = line
        s.text(WIDTH / 2, 28 + size + 50 + 22 * k, text, 16, colour, "bold", family=SANS)
    y = 12 + hh + 12
    lay._felt_at = len(s.parts)
    y = lay.draw(y)
    # A void round: a band across the cloth, nothing lit.
    if not lit_dice and any(t.startswith("VOID") for _c, t in notes):
        mid = 12 + hh + 12 + (y - hh - 24) / 2
        s.add('<g id="void-banner" transform="rotate(-12 %d %d)">' % (WIDTH // 2, mid))
        s.rect(WIDTH / 2 - 330, mid - 55, 660, 110, "#b3121f", "#ffffff", 4, 12,
               extra=' opacity="0.8"')
        s.text(WIDTH / 2, mid + 28, "VOID", 84, "#ffffff", "bold",
               extra=' letter-spacing="18"')
        s.add("</g>")
    # Legend.
    ly = y + 4
    s.rect(MARGIN + 18, ly, 22, 14, LIT, LIT_EDGE, 1.5, 3)
    s.text(MARGIN + 46, ly + 12, "winning area (lit)", 12.5, TEXT, anchor="start", family=SANS)
    s.rect(MARGIN + 200, ly, 22, 14, CELL, LINE, 1.5, 3)
    s.text(MARGIN + 228, ly + 12, "offered", 12.5, TEXT, anchor="start", family=SANS)
    s.rect(MARGIN + 310, ly, 22, 14, CLOSED, "#52705f", 1.2, 3,
           extra=' stroke-dasharray="4 3"')
    s.text(MARGIN + 338, ly + 12, "not offered by this table", 12.5, TEXT, anchor="start",
           family=SANS)
    s.text(WIDTH - MARGIN - 18, ly + 12, "winning areas by the firmware's settlement "
           "(sicbo.settle); odds N to 1 from the table file", 12, "#9a9a9a", anchor="end",
           family=SANS)
    return s.done(int(ly + 26))


def render_round(cfg, table, r, damage=None):
    """The picture of a recalled round (sicbo.recall.RoundInfo)."""
    from host_tools.commands.journal import dice_ok, void_name  # its reader's rules
    from sicbo.logtext import wall_text

    dice = tuple(r.dice) if r.dice is not None else None
    valid = dice_ok(dice)
    notes = []
    old = None
    lit = valid and r.status != "void"
    if r.void_reason:
        reason = void_name(r.void_reason)
        policy = ("players may cancel, keep or change their bets" if r.void_policy
                  else "every bet stays on the layout")
        notes.append(("#ff6b5e", "VOID: %s. Nothing is paid; %s." % (reason, policy)))
    if r.corrections:
        old_d, new_d, _when = r.corrections[-1]
        old = tuple(r.first_dice) if r.first_dice is not None else tuple(old_d)
        notes.append(("#ffb4a8", "Result corrected under the supervisor key: %s -> %s"
                      % ("-".join(map(str, old)), "-".join(map(str, new_d)))))
    if r.hold is not None and r.dice is None:
        notes.append(("#ffd2a0", "Held for the supervisor: dealer %s, reader %s"
                      % ("-".join(map(str, r.hold[0])), "-".join(map(str, r.hold[1])))))
    if damage:
        notes.append(("#ff6b5e", "DAMAGED record in this round (%s): not used" % damage))
    if dice is not None and not valid:
        notes.append(("#ff6b5e", "the journaled dice %s are not dice: nothing lit"
                      % "-".join(map(str, dice))))
        dice = None
    if dice is None and not r.void_reason and not damage and r.hold is None:
        notes.append(("#cbbf98", "no result yet"))

    def at(t):
        return wall_text(t[2]).replace("T", " ").replace("Z", " UTC") if t and t[2] is not None \
            else None

    when = at(r.result_time) or at(r.started)
    if when is None:
        when = "clock not set: boot %d, ticks %d" % (r.started[0], r.started[1])
    elif r.result_time is not None:
        when = "result " + when
    else:
        when = "started " + when
    status = {"open": "round in progress", "paying": "result confirmed, paying",
              "paid": "paid", "void": "void"}.get(r.status, r.status)
    return render(cfg, table, dice, lit, round_id=r.round, when=when, status=status,
                  notes=notes, old_dice=old)
