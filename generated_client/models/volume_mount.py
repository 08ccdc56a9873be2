from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="VolumeMount")


@_attrs_define
class VolumeMount:
    """
    Attributes:
        name (None | str | Unset):
        mount_path (None | str | Unset):
        sub_path (None | str | Unset):
        mount_propagation (None | str | Unset):
        sub_path_expr (None | str | Unset):
        read_only (bool | None | Unset):
    """

    name: None | str | Unset = UNSET
    mount_path: None | str | Unset = UNSET
    sub_path: None | str | Unset = UNSET
    mount_propagation: None | str | Unset = UNSET
    sub_path_expr: None | str | Unset = UNSET
    read_only: bool | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        mount_path: None | str | Unset
        if isinstance(self.mount_path, Unset):
            mount_path = UNSET
        else:
            mount_path = self.mount_path

        sub_path: None | str | Unset
        if isinstance(self.sub_path, Unset):
            sub_path = UNSET
        else:
            sub_path = self.sub_path

        mount_propagation: None | str | Unset
        if isinstance(self.mount_propagation, Unset):
            mount_propagation = UNSET
        else:
            mount_propagation = self.mount_propagation

        sub_path_expr: None | str | Unset
        if isinstance(self.sub_path_expr, Unset):
            sub_path_expr = UNSET
        else:
            sub_path_expr = self.sub_path_expr

        read_only: bool | None | Unset
        if isinstance(self.read_only, Unset):
            read_only = UNSET
        else:
            read_only = self.read_only

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if name is not UNSET:
            field_dict["name"] = name
        if mount_path is not UNSET:
            field_dict["mountPath"] = mount_path
        if sub_path is not UNSET:
            field_dict["subPath"] = sub_path
        if mount_propagation is not UNSET:
            field_dict["mountPropagation"] = mount_propagation
        if sub_path_expr is not UNSET:
            field_dict["subPathExpr"] = sub_path_expr
        if read_only is not UNSET:
            field_dict["readOnly"] = read_only

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        def _parse_mount_path(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        mount_path = _parse_mount_path(d.pop("mountPath", UNSET))

        def _parse_sub_path(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        sub_path = _parse_sub_path(d.pop("subPath", UNSET))

        def _parse_mount_propagation(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        mount_propagation = _parse_mount_propagation(d.pop("mountPropagation", UNSET))

        def _parse_sub_path_expr(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        sub_path_expr = _parse_sub_path_expr(d.pop("subPathExpr", UNSET))

        def _parse_read_only(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        read_only = _parse_read_only(d.pop("readOnly", UNSET))

        volume_mount = cls(
            name=name,
            mount_path=mount_path,
            sub_path=sub_path,
            mount_propagation=mount_propagation,
            sub_path_expr=sub_path_expr,
            read_only=read_only,
        )

        volume_mount.additional_properties = d
        return volume_mount

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
