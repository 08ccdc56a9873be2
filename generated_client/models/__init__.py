"""Contains all the data models used in inputs/outputs"""

from .container import Container
from .container_env_from_type_0_item import ContainerEnvFromType0Item
from .container_resources import ContainerResources
from .container_resources_limits_type_0 import ContainerResourcesLimitsType0
from .container_resources_requests_type_0 import ContainerResourcesRequestsType0
from .container_security_context_type_0 import ContainerSecurityContextType0
from .deployment import Deployment
from .deployment_page import DeploymentPage
from .deployment_secret import DeploymentSecret
from .deployment_type import DeploymentType
from .env_var import EnvVar
from .env_var_value_from_type_0 import EnvVarValueFromType0
from .error_detail import ErrorDetail
from .image_pull_secret import ImagePullSecret
from .listener_config import ListenerConfig
from .o_auth_provider import OAuthProvider
from .repository import Repository
from .resource_spec import ResourceSpec
from .resource_spec_annotations_type_0 import ResourceSpecAnnotationsType0
from .resource_spec_labels_type_0 import ResourceSpecLabelsType0
from .secret_reference import SecretReference
from .source_config import SourceConfig
from .source_revision_config import SourceRevisionConfig
from .validation_error_body import ValidationErrorBody
from .validation_error_item import ValidationErrorItem
from .volume import Volume
from .volume_config_map_type_0 import VolumeConfigMapType0
from .volume_csi_type_0 import VolumeCsiType0
from .volume_downward_api_type_0 import VolumeDownwardAPIType0
from .volume_empty_dir_type_0 import VolumeEmptyDirType0
from .volume_mount import VolumeMount
from .volume_nfs_type_0 import VolumeNfsType0
from .volume_persistent_volume_claim_type_0 import VolumePersistentVolumeClaimType0
from .volume_projected_type_0 import VolumeProjectedType0
from .volume_secret_type_0 import VolumeSecretType0

__all__ = (
    "Container",
    "ContainerEnvFromType0Item",
    "ContainerResources",
    "ContainerResourcesLimitsType0",
    "ContainerResourcesRequestsType0",
    "ContainerSecurityContextType0",
    "Deployment",
    "DeploymentPage",
    "DeploymentSecret",
    "DeploymentType",
    "EnvVar",
    "EnvVarValueFromType0",
    "ErrorDetail",
    "ImagePullSecret",
    "ListenerConfig",
    "OAuthProvider",
    "Repository",
    "ResourceSpec",
    "ResourceSpecAnnotationsType0",
    "ResourceSpecLabelsType0",
    "SecretReference",
    "SourceConfig",
    "SourceRevisionConfig",
    "ValidationErrorBody",
    "ValidationErrorItem",
    "Volume",
    "VolumeConfigMapType0",
    "VolumeCsiType0",
    "VolumeDownwardAPIType0",
    "VolumeEmptyDirType0",
    "VolumeMount",
    "VolumeNfsType0",
    "VolumePersistentVolumeClaimType0",
    "VolumeProjectedType0",
    "VolumeSecretType0",
)
