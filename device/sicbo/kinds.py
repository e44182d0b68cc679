# The kinds of bet of Art. 5 of the Sic Bo legal rules, the two editions
# (Despacho 31/2003, 2003 and 2004) and how many areas each has, as plain
# integer constants. The catalogue of areas (areas.py) is built from them.
#
# Declarations only: the build folds each use into its value
# (host_tools/constfold.py), so that the board never loads this module and
# never interns these names; sicbo.areas, loaded at every boot to build the
# settlement table, would otherwise keep all of them.

from micropython import const

EDITION_2003 = const(2003)
EDITION_2004 = const(2004)

SMALL = const(0)
BIG = const(1)
SINGLE = const(2)  # 三軍: n on one, two or three dice
TRIPLE = const(3)  # 圍骰: a named triple
ANY_TRIPLE = const(4)  # 全圍 / 全骰
TOTAL = const(5)  # 點數
ODD = const(6)  # 單
EVEN = const(7)  # 雙
COMBO_DOUBLE = const(8)  # a double of a plus a single b
COMBO_THREE = const(9)  # three named different numbers
PAIR = const(10)  # 長牌: two named different numbers
DOUBLE = const(11)  # 短牌: at least two dice show n
FOUR = const(12)  # three different numbers, all among four named

# The 2003 edition's areas are the first 29 of the 2004 edition's catalogue.
AREA_COUNT_2003 = const(29)
AREA_COUNT_2004 = const(117)
