from __future__ import absolute_import

# flake8: noqa

# import apis into api package
from pipewright_client.api.api_keys_api import APIKeysApi
from pipewright_client.api.accounts_api import AccountsApi
from pipewright_client.api.commands_api import CommandsApi
from pipewright_client.api.events_api import EventsApi
from pipewright_client.api.identities_api import IdentitiesApi
from pipewright_client.api.notifications_api import NotificationsApi
from pipewright_client.api.organization_api import OrganizationApi
from pipewright_client.api.pipelines_api import PipelinesApi
from pipewright_client.api.projects_api import ProjectsApi
from pipewright_client.api.resources_api import ResourcesApi
from pipewright_client.api.scratchpad_api import ScratchpadApi
from pipewright_client.api.status_api import StatusApi
from pipewright_client.api.streams_api import StreamsApi
from pipewright_client.api.tasks_api import TasksApi
from pipewright_client.api.webhooks_api import WebhooksApi
