from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.env_var_value_from_type_0 import EnvVarValueFromType0


T = TypeVar("T", bound="EnvVar")


@_attrs_define
class EnvVar:
    """
    Attributes:
        name (None | str | Unset):
        value (None | str | Unset):
        value_from (EnvVarValueFromType0 | None | Unset):
    """

    name: None | str | Unset = UNSET
    value: None | str | Unset = UNSET
    value_from: EnvVarValueFromType0 | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.env_var_value_from_type_0 import EnvVarValueFromType0  # noqa: PLC0415

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        value: None | str | Unset
        if isinstance(self.value, Unset):
            value = UNSET
        else:
            value = self.value

        value_from: dict[str, Any] | None | Unset
        if isinstance(self.value_from, Unset):
            value_from = UNSET
        elif isinstance(self.value_from, EnvVarValueFromType0):
            value_from = self.value_from.to_dict()
        else:
            value_from = self.value_from

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if name is not UNSET:
            field_dict["name"] = name
        if value is not UNSET:
            field_dict["value"] = value
        if value_from is not UNSET:
            field_dict["valueFrom"] = value_from

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.env_var_value_from_type_0 import EnvVarValueFromType0  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        def _parse_value(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        value = _parse_value(d.pop("value", UNSET))

        def _parse_value_from(data: object) -> EnvVarValueFromType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                value_from_type_0 = EnvVarValueFromType0.from_dict(data)

                return value_from_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EnvVarValueFromType0 | None | Unset, data)

        value_from = _parse_value_from(d.pop("valueFrom", UNSET))

        env_var = cls(
            name=name,
            value=value,
            value_from=value_from,
        )

        env_var.additional_properties = d
        return env_var

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
