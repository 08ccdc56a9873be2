from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.volume_config_map_type_0 import VolumeConfigMapType0
    from ..models.volume_csi_type_0 import VolumeCsiType0
    from ..models.volume_downward_api_type_0 import VolumeDownwardAPIType0
    from ..models.volume_empty_dir_type_0 import VolumeEmptyDirType0
    from ..models.volume_nfs_type_0 import VolumeNfsType0
    from ..models.volume_persistent_volume_claim_type_0 import (
        VolumePersistentVolumeClaimType0,
    )
    from ..models.volume_projected_type_0 import VolumeProjectedType0
    from ..models.volume_secret_type_0 import VolumeSecretType0


T = TypeVar("T", bound="Volume")


@_attrs_define
class Volume:
    """
    Attributes:
        name (None | str | Unset):
        config_map (None | Unset | VolumeConfigMapType0):
        secret (None | Unset | VolumeSecretType0):
        empty_dir (None | Unset | VolumeEmptyDirType0):
        persistent_volume_claim (None | Unset | VolumePersistentVolumeClaimType0):
        nfs (None | Unset | VolumeNfsType0):
        projected (None | Unset | VolumeProjectedType0):
        downward_api (None | Unset | VolumeDownwardAPIType0):
        csi (None | Unset | VolumeCsiType0):
    """

    name: None | str | Unset = UNSET
    config_map: None | Unset | VolumeConfigMapType0 = UNSET
    secret: None | Unset | VolumeSecretType0 = UNSET
    empty_dir: None | Unset | VolumeEmptyDirType0 = UNSET
    persistent_volume_claim: None | Unset | VolumePersistentVolumeClaimType0 = UNSET
    nfs: None | Unset | VolumeNfsType0 = UNSET
    projected: None | Unset | VolumeProjectedType0 = UNSET
    downward_api: None | Unset | VolumeDownwardAPIType0 = UNSET
    csi: None | Unset | VolumeCsiType0 = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.volume_config_map_type_0 import VolumeConfigMapType0  # noqa: PLC0415
        from ..models.volume_csi_type_0 import VolumeCsiType0  # noqa: PLC0415
        from ..models.volume_downward_api_type_0 import VolumeDownwardAPIType0  # noqa: PLC0415
        from ..models.volume_empty_dir_type_0 import VolumeEmptyDirType0  # noqa: PLC0415
        from ..models.volume_nfs_type_0 import VolumeNfsType0  # noqa: PLC0415
        from ..models.volume_persistent_volume_claim_type_0 import (
            VolumePersistentVolumeClaimType0,  # noqa: PLC0415
        )
        from ..models.volume_projected_type_0 import VolumeProjectedType0  # noqa: PLC0415
        from ..models.volume_secret_type_0 import VolumeSecretType0  # noqa: PLC0415

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        config_map: dict[str, Any] | None | Unset
        if isinstance(self.config_map, Unset):
            config_map = UNSET
        elif isinstance(self.config_map, VolumeConfigMapType0):
            config_map = self.config_map.to_dict()
        else:
            config_map = self.config_map

        secret: dict[str, Any] | None | Unset
        if isinstance(self.secret, Unset):
            secret = UNSET
        elif isinstance(self.secret, VolumeSecretType0):
            secret = self.secret.to_dict()
        else:
            secret = self.secret

        empty_dir: dict[str, Any] | None | Unset
        if isinstance(self.empty_dir, Unset):
            empty_dir = UNSET
        elif isinstance(self.empty_dir, VolumeEmptyDirType0):
            empty_dir = self.empty_dir.to_dict()
        else:
            empty_dir = self.empty_dir

        persistent_volume_claim: dict[str, Any] | None | Unset
        if isinstance(self.persistent_volume_claim, Unset):
            persistent_volume_claim = UNSET
        elif isinstance(self.persistent_volume_claim, VolumePersistentVolumeClaimType0):
            persistent_volume_claim = self.persistent_volume_claim.to_dict()
        else:
            persistent_volume_claim = self.persistent_volume_claim

        nfs: dict[str, Any] | None | Unset
        if isinstance(self.nfs, Unset):
            nfs = UNSET
        elif isinstance(self.nfs, VolumeNfsType0):
            nfs = self.nfs.to_dict()
        else:
            nfs = self.nfs

        projected: dict[str, Any] | None | Unset
        if isinstance(self.projected, Unset):
            projected = UNSET
        elif isinstance(self.projected, VolumeProjectedType0):
            projected = self.projected.to_dict()
        else:
            projected = self.projected

        downward_api: dict[str, Any] | None | Unset
        if isinstance(self.downward_api, Unset):
            downward_api = UNSET
        elif isinstance(self.downward_api, VolumeDownwardAPIType0):
            downward_api = self.downward_api.to_dict()
        else:
            downward_api = self.downward_api

        csi: dict[str, Any] | None | Unset
        if isinstance(self.csi, Unset):
            csi = UNSET
        elif isinstance(self.csi, VolumeCsiType0):
            csi = self.csi.to_dict()
        else:
            csi = self.csi

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if name is not UNSET:
            field_dict["name"] = name
        if config_map is not UNSET:
            field_dict["configMap"] = config_map
        if secret is not UNSET:
            field_dict["secret"] = secret
        if empty_dir is not UNSET:
            field_dict["emptyDir"] = empty_dir
        if persistent_volume_claim is not UNSET:
            field_dict["persistentVolumeClaim"] = persistent_volume_claim
        if nfs is not UNSET:
            field_dict["nfs"] = nfs
        if projected is not UNSET:
            field_dict["projected"] = projected
        if downward_api is not UNSET:
            field_dict["downwardAPI"] = downward_api
        if csi is not UNSET:
            field_dict["csi"] = csi

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.volume_config_map_type_0 import VolumeConfigMapType0  # noqa: PLC0415
        from ..models.volume_csi_type_0 import VolumeCsiType0  # noqa: PLC0415
        from ..models.volume_downward_api_type_0 import VolumeDownwardAPIType0  # noqa: PLC0415
        from ..models.volume_empty_dir_type_0 import VolumeEmptyDirType0  # noqa: PLC0415
        from ..models.volume_nfs_type_0 import VolumeNfsType0  # noqa: PLC0415
        from ..models.volume_persistent_volume_claim_type_0 import (
            VolumePersistentVolumeClaimType0,  # noqa: PLC0415
        )
        from ..models.volume_projected_type_0 import VolumeProjectedType0  # noqa: PLC0415
        from ..models.volume_secret_type_0 import VolumeSecretType0  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        def _parse_config_map(data: object) -> None | Unset | VolumeConfigMapType0:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                config_map_type_0 = VolumeConfigMapType0.from_dict(data)

                return config_map_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | VolumeConfigMapType0, data)

        config_map = _parse_config_map(d.pop("configMap", UNSET))

        def _parse_secret(data: object) -> None | Unset | VolumeSecretType0:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                secret_type_0 = VolumeSecretType0.from_dict(data)

                return secret_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | VolumeSecretType0, data)

        secret = _parse_secret(d.pop("secret", UNSET))

        def _parse_empty_dir(data: object) -> None | Unset | VolumeEmptyDirType0:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                empty_dir_type_0 = VolumeEmptyDirType0.from_dict(data)

                return empty_dir_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | VolumeEmptyDirType0, data)

        empty_dir = _parse_empty_dir(d.pop("emptyDir", UNSET))

        def _parse_persistent_volume_claim(
            data: object,
        ) -> None | Unset | VolumePersistentVolumeClaimType0:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                persistent_volume_claim_type_0 = (
                    VolumePersistentVolumeClaimType0.from_dict(data)
                )

                return persistent_volume_claim_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | VolumePersistentVolumeClaimType0, data)

        persistent_volume_claim = _parse_persistent_volume_claim(
            d.pop("persistentVolumeClaim", UNSET)
        )

        def _parse_nfs(data: object) -> None | Unset | VolumeNfsType0:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                nfs_type_0 = VolumeNfsType0.from_dict(data)

                return nfs_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | VolumeNfsType0, data)

        nfs = _parse_nfs(d.pop("nfs", UNSET))

        def _parse_projected(data: object) -> None | Unset | VolumeProjectedType0:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                projected_type_0 = VolumeProjectedType0.from_dict(data)

                return projected_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | VolumeProjectedType0, data)

        projected = _parse_projected(d.pop("projected", UNSET))

        def _parse_downward_api(data: object) -> None | Unset | VolumeDownwardAPIType0:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                downward_api_type_0 = VolumeDownwardAPIType0.from_dict(data)

                return downward_api_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | VolumeDownwardAPIType0, data)

        downward_api = _parse_downward_api(d.pop("downwardAPI", UNSET))

        def _parse_csi(data: object) -> None | Unset | VolumeCsiType0:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                csi_type_0 = VolumeCsiType0.from_dict(data)

                return csi_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | VolumeCsiType0, data)

        csi = _parse_csi(d.pop("csi", UNSET))

        volume = cls(
            name=name,
            config_map=config_map,
            secret=secret,
            empty_dir=empty_dir,
            persistent_volume_claim=persistent_volume_claim,
            nfs=nfs,
            projected=projected,
            downward_api=downward_api,
            csi=csi,
        )

        volume.additional_properties = d
        return volume

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
