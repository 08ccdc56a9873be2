from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.container_resources_limits_type_0 import ContainerResourcesLimitsType0
    from ..models.container_resources_requests_type_0 import (
        ContainerResourcesRequestsType0,
    )


T = TypeVar("T", bound="ContainerResources")


@_attrs_define
class ContainerResources:
    """
    Attributes:
        limits (ContainerResourcesLimitsType0 | None | Unset):
        requests (ContainerResourcesRequestsType0 | None | Unset):
    """

    limits: ContainerResourcesLimitsType0 | None | Unset = UNSET
    requests: ContainerResourcesRequestsType0 | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.container_resources_limits_type_0 import (
            ContainerResourcesLimitsType0,  # noqa: PLC0415
        )
        from ..models.container_resources_requests_type_0 import (
            ContainerResourcesRequestsType0,  # noqa: PLC0415
        )

        limits: dict[str, Any] | None | Unset
        if isinstance(self.limits, Unset):
            limits = UNSET
        elif isinstance(self.limits, ContainerResourcesLimitsType0):
            limits = self.limits.to_dict()
        else:
            limits = self.limits

        requests: dict[str, Any] | None | Unset
        if isinstance(self.requests, Unset):
            requests = UNSET
        elif isinstance(self.requests, ContainerResourcesRequestsType0):
            requests = self.requests.to_dict()
        else:
            requests = self.requests

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if limits is not UNSET:
            field_dict["limits"] = limits
        if requests is not UNSET:
            field_dict["requests"] = requests

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.container_resources_limits_type_0 import (
            ContainerResourcesLimitsType0,  # noqa: PLC0415
        )
        from ..models.container_resources_requests_type_0 import (
            ContainerResourcesRequestsType0,  # noqa: PLC0415
        )

        d = dict(src_dict)

        def _parse_limits(data: object) -> ContainerResourcesLimitsType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                limits_type_0 = ContainerResourcesLimitsType0.from_dict(data)

                return limits_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ContainerResourcesLimitsType0 | None | Unset, data)

        limits = _parse_limits(d.pop("limits", UNSET))

        def _parse_requests(
            data: object,
        ) -> ContainerResourcesRequestsType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                requests_type_0 = ContainerResourcesRequestsType0.from_dict(data)

                return requests_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ContainerResourcesRequestsType0 | None | Unset, data)

        requests = _parse_requests(d.pop("requests", UNSET))

        container_resources = cls(
            limits=limits,
            requests=requests,
        )

        container_resources.additional_properties = d
        return container_resources

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
