# The regulator's approval of a table configuration (rules.md Art. 8): the
# table runs only once its approval is in force. Pure: the clock and the
# journal's state come in as arguments.

from sicbo import dates


def refusal(cfg, wall, state, config_id):
    """None when the table may run, else the one line saying why not. cfg: the
    TableConfig (its approval record); wall: seconds since 2000-01-01 UTC, or
    None when the clock is not set; state: the journal's RoundState (its
    config_id and config_wall); config_id: the files' id now. Fails closed:
    with the clock unknown (the ESP32's RTC does not survive a power cut),
    only a journal that shows these very files journaled at a known time on
    or after the effective date lets the table run."""
    effective = dates.parse(cfg.approval["effective"])
    if wall is not None:
        if wall // 86400 + dates.DAY_2000 >= effective:
            return None
        return ("table approval %s is effective from %s only: table not started"
                % (cfg.approval["reference"], cfg.approval["effective"]))
    known = state.config_wall
    if bytes(state.config_id) == config_id and known is not None and (
            known // 86400 + dates.DAY_2000 >= effective):
        return None
    return ("RTC not set and the journal does not show table approval %s in force: "
            "set the clock (sicbo deploy or sicbo diag sets it); table not started"
            % cfg.approval["reference"])
