"""Verdict channels: how a job's verdict is reached and who may give it."""





