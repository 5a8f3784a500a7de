"""The base of every campaign's setting: a frozen dataclass that writes itself as a dict and a short hash.

A campaign's config (``P1Config`` ... ``P4Config``, ``P5Config``, ``TestbedP5Config``,
``SvkConfig``) is stored in each record and in the dataset's provenance as :meth:`CampaignConfig.to_dict`,
and records are keyed by :meth:`CampaignConfig.hash`; both are defined here once. A config adds derived
values or the stored form of a field (a list for a tuple of tuples) through
:meth:`CampaignConfig.derived_fields`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict

__all__ = ["CampaignConfig"]


class CampaignConfig:
    """Mixin of a campaign's frozen dataclass: ``to_dict`` and ``hash``, the same for every campaign.

    The hash is what records are keyed by: it must not change for a config whose dict is unchanged
    (``tests/experiments/test_campaign_config.py`` holds the hashes of the shipped defaults).
    """

    def derived_fields(self) -> dict:
        """Values :meth:`to_dict` writes over or after the fields (none here; a campaign overrides it).

        Returns
        -------
        dict
            Name -> value: a derived quantity (appended) or a field's stored form (in the field's place).
        """
        return {}

    def to_dict(self) -> dict:
        """The fields as a dict (tuples stay tuples) with :meth:`derived_fields` merged over them.

        Returns
        -------
        dict
            Field name -> value, as stored in every record and in the provenance.
        """
        return {**asdict(self), **self.derived_fields()}

    def hash(self) -> str:
        """Short fingerprint of the configuration, stored in every record.

        Returns
        -------
        str
            The first 16 hexadecimal digits of the SHA-256 of :meth:`to_dict` as JSON with sorted keys.
        """
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:16]
