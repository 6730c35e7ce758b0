"""Notifications during a run and at its end (config `notify`): a desktop notifier, a JSON webhook, and, with
the optional extra `ralphloop[notify]`, every service apprise speaks (ntfy, Telegram, Slack, Discord, email, ...).

settings.py reads the config section, urls.py checks and redacts URLs, events.py decides which event notifies
and what it says (pure), deliver.py and via_apprise.py send, sink.py subscribes to the run and sends off the
loop's thread. This package file imports none of them: config/settings.py needs only the settings.
"""
