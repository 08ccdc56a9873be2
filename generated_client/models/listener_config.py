from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ListenerConfig")


@_attrs_define
class ListenerConfig:
    """
    Attributes:
        k8s_namespace (None | str | Unset):
    """

    k8s_namespace: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        k8s_namespace: None | str | Unset
        if isinstance(self.k8s_namespace, Unset):
            k8s_namespace = UNSET
        else:
            k8s_namespace = self.k8s_namespace

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if k8s_namespace is not UNSET:
            field_dict["k8s_namespace"] = k8s_namespace

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_k8s_namespace(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        k8s_namespace = _parse_k8s_namespace(d.pop("k8s_namespace", UNSET))

        listener_config = cls(
            k8s_namespace=k8s_namespace,
        )

        listener_config.additional_properties = d
        return listener_config

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
